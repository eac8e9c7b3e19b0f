// The interactive terminal of `lockscope top`: raw keys, an alternate
// screen, frames drawn in place, and the terminal given back as found.
#pragma once

#include <termios.h>

#include <string>
#include <vector>

namespace lockscope::cli {

class RawTerminal {
public:
    // Switches `in` to non-canonical, no-echo input and `out` to the
    // alternate screen. Ctrl-C still raises SIGINT (top stops through the
    // recorder's signal handling); Ctrl-Z is disabled, because a stopped
    // top would leave the shell a raw terminal. Throws Error.
    RawTerminal(int in, int out);
    ~RawTerminal();  // restores the saved termios and the main screen
    RawTerminal(const RawTerminal&) = delete;
    RawTerminal& operator=(const RawTerminal&) = delete;

    // Columns and rows now (the window may have been resized).
    void size(size_t& columns, size_t& rows) const;
    // Replaces the screen's contents with `lines` in one write.
    void draw(const std::vector<std::string>& lines) const;

private:
    int in_, out_;
    termios saved_{};
};

}  // namespace lockscope::cli
