#include "cli/options.h"

#include <iostream>

#include "core/error.h"

namespace lockscope::cli {

bool parse(const Args& args, const po::options_description& visible, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, const char* usage,
           bool allow_trailing, std::vector<std::string>* trailing)
{
    Args own = args;
    if (allow_trailing) {
        // Everything after "--" is the traced command, untouched.
        for (size_t i = 0; i < args.size(); i++) {
            if (args[i] == "--") {
                own.assign(args.begin(), args.begin() + long(i));
                if (trailing)
                    trailing->assign(args.begin() + long(i) + 1, args.end());
                break;
            }
        }
    }
    try {
        po::store(po::command_line_parser(own).options(all).positional(positional).run(), vm);
        if (vm.count("help")) {
            std::cout << usage << "\n" << visible << "\n";
            return false;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        throw UsageError(e.what());
    }
    return true;
}

void add_filter_options(po::options_description& options, FilterArgs& args)
{
    options.add_options()(
        "kind", po::value(&args.kinds)->composing(),
        "only these lock kinds, comma-separated or repeated: mutex, rwsem, spinlock, rwlock, rtmutex, "
        "rt-rwlock, percpu-rwsem, semaphore, user-mutex, user-rwsem, or perf's spellings (rwsem:R, rwsem:W, "
        "rwlock:R, rt-mutex, rwlock-rt, pcpu-sem)")("lock", po::value(&args.locks)->composing(),
                                                    "only locks whose name matches (a shell pattern: "
                                                    "'inode.*', 'pipe_inode_info.mutex'); repeatable")(
        "caller", po::value(&args.callers)->composing(),
        "only locks whose caller matches (a shell pattern: "
        "'anon_pipe_*'); repeatable");
}

LockFilter filter_from(const FilterArgs& args)
{
    LockFilter f;
    for (const std::string& k : args.kinds)
        add_kind_filter(f, k);
    for (const std::string& l : args.locks)
        add_pattern_filter(f.locks, l, "--lock");
    for (const std::string& c : args.callers)
        add_pattern_filter(f.callers, c, "--caller");
    return f;
}

}  // namespace lockscope::cli
