#include "cli/top_terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>

#include "core/error.h"

namespace lockscope::cli {
namespace {

void write_all(int fd, const std::string& s)
{
    size_t done = 0;
    while (done < s.size()) {
        const ssize_t n = write(fd, s.data() + done, s.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;  // the terminal went away; nothing left to show it to
        done += size_t(n);
    }
}

constexpr const char* kEnter = "\033[?1049h\033[?25l";  // alternate screen, hide cursor
constexpr const char* kLeave = "\033[?25h\033[?1049l";  // show cursor, main screen

}  // namespace

RawTerminal::RawTerminal(int in, int out) : in_(in), out_(out)
{
    if (tcgetattr(in_, &saved_) != 0)
        throw Error("cannot read the terminal's settings", "", errno);
    termios raw = saved_;
    raw.c_lflag &= tcflag_t(~(ICANON | ECHO));
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    raw.c_cc[VSUSP] = _POSIX_VDISABLE;
    if (tcsetattr(in_, TCSAFLUSH, &raw) != 0)
        throw Error("cannot set the terminal to raw input", "", errno);
    write_all(out_, kEnter);
}

RawTerminal::~RawTerminal()
{
    write_all(out_, kLeave);
    tcsetattr(in_, TCSAFLUSH, &saved_);
}

void RawTerminal::size(size_t& columns, size_t& rows) const
{
    winsize ws{};
    columns = 100;
    rows = 24;
    if (ioctl(out_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
        columns = ws.ws_col;
        rows = ws.ws_row;
    }
}

void RawTerminal::draw(const std::vector<std::string>& lines) const
{
    size_t columns = 0, rows = 0;
    size(columns, rows);
    std::string frame = "\033[H";
    for (size_t i = 0; i < lines.size() && i < rows; i++) {
        frame += lines[i];
        frame += "\033[K";
        if (i + 1 < rows)
            frame += "\r\n";
    }
    frame += "\033[J";
    write_all(out_, frame);
}

}  // namespace lockscope::cli
