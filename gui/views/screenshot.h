// `lockscope-gui --screenshot OUT.png [--page overview|locks|chains|holders|diff] FILE…`
// (or `--page diff --prometheus URL …` for a fleet comparison): renders one
// page at 1280×800 without a display and exits.
#pragma once

#include "fleet/fleet_diff.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace lockscope::gui {

class MainWindow;

struct ScreenshotRequest {
    QString output;
    QString page = QStringLiteral("overview");  // overview, locks, chains, holders or diff
    QStringList files;                          // diff: A and B
    std::optional<fleet::FleetRequest> fleet;   // diff: two groups of hosts instead of files
};

// Opens the files in `window`, waits for the loads (at most `timeout_ms`),
// shows the page and grabs it. Returns an empty string or the error.
QString prepare_page(MainWindow& window, const ScreenshotRequest& request, int timeout_ms = 60000);

// prepare_page, then saves the PNG. Exit code: 0 ok, 1 failure, 2 usage.
int render_screenshot(const ScreenshotRequest& request);

}  // namespace lockscope::gui
