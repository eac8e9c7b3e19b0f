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

}  // namespace lockscope::cli
