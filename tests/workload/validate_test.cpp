#include "core/error.h"
#include "workload/workload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

using lockscope::UsageError;
using lockscope::workload::Options;
using lockscope::workload::validate;
using ::testing::HasSubstr;

namespace {

Options valid()
{
    Options o;
    o.name = "pipe";
    o.threads = 2;
    o.duration_s = 1;
    return o;
}

std::string usage_message(const Options& o)
{
    try {
        validate(o);
    } catch (const UsageError& e) {
        return e.what();
    }
    return "(no UsageError)";
}

}  // namespace

TEST(WorkloadValidate, AcceptsEveryCatalogueEntry)
{
    for (const auto& w : lockscope::workload::catalogue()) {
        Options o = valid();
        o.name = w.name;
        EXPECT_NO_THROW(validate(o)) << w.name;
        EXPECT_FALSE(w.lock.empty()) << w.name;
        EXPECT_FALSE(w.description.empty()) << w.name;
    }
}

TEST(WorkloadValidate, UnknownNameListsTheValidOnes)
{
    Options o = valid();
    o.name = "unlink3";
    std::string message = usage_message(o);
    EXPECT_THAT(message, HasSubstr("unlink3"));
    for (const char* name : {"pipe", "unlink1", "unlink2", "mmap1", "pagefault", "signals"})
        EXPECT_THAT(message, HasSubstr(name));
}

TEST(WorkloadValidate, ThreadCountOutOfRange)
{
    Options o = valid();
    o.threads = 0;
    EXPECT_THROW(validate(o), UsageError);
    o.threads = lockscope::workload::kMaxThreads + 1;
    EXPECT_THAT(usage_message(o), HasSubstr("1024"));
    o.threads = lockscope::workload::kMaxThreads;
    EXPECT_NO_THROW(validate(o));
}

TEST(WorkloadValidate, DurationMustBePositive)
{
    Options o = valid();
    for (double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        o.duration_s = bad;
        EXPECT_THROW(validate(o), UsageError) << bad;
    }
}
