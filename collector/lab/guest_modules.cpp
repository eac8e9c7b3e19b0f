#include "lab/guest_modules.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "lab/process.h"

namespace fs = std::filesystem;

namespace lockscope::lab {
namespace {

// Module names treat '-' and '_' alike.
std::string canonical(std::string name)
{
    for (char& c : name)
        if (c == '-')
            c = '_';
    return name;
}

std::string module_name(const std::string& file_name)
{
    const size_t ko = file_name.find(".ko");
    return canonical(file_name.substr(0, ko));
}

bool ends_with(const std::string& s, const std::string& suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string read_all(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("cannot read module", path, errno);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string load_module(const std::string& path)
{
    if (ends_with(path, ".ko"))
        return read_all(path);
    std::vector<std::string> argv;
    if (ends_with(path, ".ko.xz"))
        argv = {"xz", "-dc", path};
    else if (ends_with(path, ".ko.zst"))
        argv = {"zstd", "-dcq", path};
    else if (ends_with(path, ".ko.gz"))
        argv = {"gzip", "-dc", path};
    else
        throw Error("unknown module compression", path);
    ProcessResult r = run_capture(argv, {}, false);
    if (r.status != 0 || r.output.empty())
        throw Error("cannot decompress module", path, 0, "is " + argv[0] + " installed?");
    return r.output;
}

std::set<std::string> builtin_modules(const std::string& modules_dir)
{
    std::set<std::string> out;
    std::ifstream in(modules_dir + "/modules.builtin");
    std::string line;
    while (std::getline(in, line))
        out.insert(module_name(fs::path(line).filename().string()));
    return out;
}

std::map<std::string, std::string> module_files(const std::string& modules_dir)
{
    std::map<std::string, std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(modules_dir, ec); !ec && it != fs::end(it); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.find(".ko") != std::string::npos && it->is_regular_file(ec))
            out.emplace(module_name(name), it->path().string());
    }
    return out;
}

struct Resolver {
    std::set<std::string> builtin;
    std::map<std::string, std::string> files;
    std::set<std::string> visiting, done;
    std::vector<GuestModule> order;

    void add(const std::string& wanted_name)
    {
        const std::string name = canonical(wanted_name);
        if (done.count(name) || builtin.count(name))
            return;
        if (visiting.count(name))
            throw Error("module dependency cycle at", name);
        auto file = files.find(name);
        if (file == files.end())
            throw Error("module not found in the kernel's modules directory", name, 0,
                        "the guest kernel needs it built in or as a module");
        visiting.insert(name);
        GuestModule m{name, file->second, load_module(file->second)};
        for (const std::string& dep : module_depends(m.contents))
            add(dep);
        visiting.erase(name);
        done.insert(name);
        order.push_back(std::move(m));
    }
};

}  // namespace

std::vector<std::string> module_depends(const std::string& contents)
{
    static const std::string key = std::string("\0depends=", 9);
    std::vector<std::string> out;
    const size_t at = contents.find(key);
    if (at == std::string::npos)
        return out;
    const size_t start = at + key.size();
    const size_t end = contents.find('\0', start);
    std::istringstream list(contents.substr(start, end == std::string::npos ? std::string::npos : end - start));
    std::string dep;
    while (std::getline(list, dep, ','))
        if (!dep.empty())
            out.push_back(canonical(dep));
    return out;
}

std::vector<GuestModule> resolve_guest_modules(const std::string& modules_dir, const std::vector<std::string>& wanted)
{
    Resolver r;
    r.builtin = builtin_modules(modules_dir);
    r.files = module_files(modules_dir);
    for (const std::string& name : wanted)
        r.add(name);
    return std::move(r.order);
}

}  // namespace lockscope::lab
