// The dashboard's door (doors.h): its locks table and user-locks table over
// a snapshot of a session file, built as lockscope-gui builds them.
#pragma once

#include <string>

#include "doors.h"

namespace lockscope::doors {

// Kernel locks: contentions, wait and the wait's parts from the locks
// table's exact values; user locks: the waits the user-locks table shows.
View from_gui(const std::string& path);

}  // namespace lockscope::doors
