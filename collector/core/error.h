// Errors as values with context: the operation, the object and errno, plus
// a remedy the user can act on. They reach the user as one sentence.
#pragma once

#include <stdexcept>
#include <string>

namespace lockscope {

class Error : public std::runtime_error {
public:
    Error(std::string operation, std::string object, int err = 0, std::string remedy = {});

    const std::string& operation() const { return operation_; }
    const std::string& object() const { return object_; }
    int err() const { return err_; }
    const std::string& remedy() const { return remedy_; }

private:
    std::string operation_;
    std::string object_;
    int err_;
    std::string remedy_;
};

// Bad command-line usage: reported with a pointer to --help, exit code 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Exit codes shared by every subcommand.
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

}  // namespace lockscope
