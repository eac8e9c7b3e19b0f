// `lockscope export --format pprof`: the sampled waiter stacks as a gzipped
// profile.proto profile, in the convention of Go's mutex profile
// (contentions/count, delay/nanoseconds) plus the wait's four parts in
// nanoseconds (spinning, queued_on_cpu, asleep, runnable: they add up to
// delay in every sample), rooted at a frame naming the lock. Like the folded
// export, each lock's exact totals are shared among its sampled stacks
// (export_stacks.h), so a profile's values add up to the report's totals,
// per lock and overall.
#include "core/render/export.h"
#include "core/render/export_stacks.h"

#include "core/analysis/report_parts.h"

#include <zlib.h>

#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "profile.pb.h"

namespace lockscope {
namespace {

namespace pp = perftools::profiles;

class Strings {
public:
    explicit Strings(pp::Profile& p) : p_(p) { at(""); }
    int64_t at(const std::string& s)
    {
        auto [it, added] = index_.try_emplace(s, int64_t(index_.size()));
        if (added)
            p_.add_string_table(s);
        return it->second;
    }

private:
    pp::Profile& p_;
    std::unordered_map<std::string, int64_t> index_;
};

// One function and one location per distinct frame name: the session keeps
// symbols, not addresses, so locations carry none.
class Frames {
public:
    Frames(pp::Profile& p, Strings& s) : p_(p), s_(s) {}
    uint64_t location(const std::string& name)
    {
        auto [it, added] = ids_.try_emplace(name, uint64_t(ids_.size() + 1));
        if (added) {
            pp::Function* f = p_.add_function();
            f->set_id(it->second);
            f->set_name(s_.at(name));
            f->set_system_name(s_.at(name));
            pp::Location* l = p_.add_location();
            l->set_id(it->second);
            l->add_line()->set_function_id(it->second);
        }
        return it->second;
    }

private:
    pp::Profile& p_;
    Strings& s_;
    std::unordered_map<std::string, uint64_t> ids_;
};

std::string gzip(const std::string& data)
{
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("zlib: cannot start compressing");
    std::string out(deflateBound(&z, uLong(data.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = uInt(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END)
        throw std::runtime_error("zlib: cannot compress the profile");
    return out;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& pprof_sample_types()
{
    static const std::vector<std::pair<std::string, std::string>> types = [] {
        std::vector<std::pair<std::string, std::string>> t = {{"contentions", "count"}, {"delay", "nanoseconds"}};
        for (const WaitPart& part : kWaitParts)
            t.emplace_back(part.name, "nanoseconds");
        return t;
    }();
    return types;
}

void export_pprof(const Session& session, std::ostream& out)
{
    pp::Profile p;
    Strings strings(p);
    Frames frames(p, strings);
    for (const auto& [type, unit] : pprof_sample_types()) {
        pp::ValueType* t = p.add_sample_type();
        t->set_type(strings.at(type));
        t->set_unit(strings.at(unit));
    }
    p.mutable_period_type()->set_type(strings.at("contentions"));
    p.mutable_period_type()->set_unit(strings.at("count"));
    p.set_period(1);
    p.set_default_sample_type(strings.at("delay"));  // a string index: the type shown first
    uint64_t duration_ns = 0;
    for (const IntervalTotals& in : session.intervals)
        duration_ns += in.end_ns - in.start_ns;
    p.set_duration_nanos(int64_t(duration_ns));
    p.add_comment(
        strings.at("lockscope: kernel and user-space lock contention (label scope=user for the latter); stacks "
                   "are sampled, each lock's values are its exact totals spread over its sampled stacks"));
    const std::string host = session.meta_value("host"), kernel = session.meta_value("kernel_release");
    if (!host.empty() || !kernel.empty())
        p.add_comment(strings.at("host " + host + ", kernel " + kernel));

    // The order of pprof_sample_types(): contentions, delay, the wait's parts.
    std::vector<StackMeasure> measures = {[](const LockCounters& c) { return c.contentions; },
                                          [](const LockCounters& c) { return c.wait_ns; }};
    for (const WaitPart& part : kWaitParts)
        measures.push_back([ns = part.ns](const LockCounters& c) { return (c.*ns)(); });
    const int64_t lock_key = strings.at("lock"), kind_key = strings.at("kind"), source_key = strings.at("name_source"),
                  scope_key = strings.at("scope");
    for (const WeightedStack& w : weigh_stacks(session, measures)) {
        pp::Sample* s = p.add_sample();
        for (const std::string& fn : w.frames)  // innermost first, as pprof wants
            s->add_location_id(frames.location(fn));
        if (w.frames.empty())
            s->add_location_id(frames.location("[no stack sampled]"));
        s->add_location_id(frames.location(w.root()));
        for (uint64_t v : w.values)
            s->add_value(int64_t(v > uint64_t(INT64_MAX) ? INT64_MAX : v));
        pp::Label* l = s->add_label();
        l->set_key(lock_key);
        l->set_str(strings.at(w.name));
        l = s->add_label();
        l->set_key(kind_key);
        l->set_str(strings.at(w.kind));
        if (!w.name_source.empty()) {
            l = s->add_label();
            l->set_key(source_key);
            l->set_str(strings.at(w.name_source));
        }
        if (w.user) {
            l = s->add_label();
            l->set_key(scope_key);
            l->set_str(strings.at("user"));
        }
    }
    std::string bytes;
    if (!p.SerializeToString(&bytes))
        throw std::runtime_error("cannot encode the profile");
    out << gzip(bytes);
}

}  // namespace lockscope
