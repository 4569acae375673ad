// Running the system compressors for bench, safely: a private scratch folder and no shell.
#pragma once
#include <string>
#include <vector>

namespace stzcli {

// A private folder (mkdtemp under TMPDIR, mode 0700) for the files of the system tools. It
// and its files are removed on destruction and by a terminating signal (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT).
class ScratchDir {
public:
    ScratchDir();
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    // Creates `name` in the folder (O_EXCL, mode 0600) and returns its path.
    std::string create_file(const std::string& name);
    const std::string& path() const { return dir_; }

private:
    std::string dir_;
    std::vector<std::string> files_;
    std::vector<int> slots_;
};

// The median of timed runs (0 for none).
double median(std::vector<double> v);

// True if `tool` is an executable file in a PATH folder.
bool have_tool(const std::string& tool);

// Runs argv[0] (looked up in PATH) with stdin from /dev/null, stdout into `out_path`
// (truncated), stderr inherited; no shell. Wall seconds, or a negative value on failure.
double run_tool_timed(const std::vector<std::string>& argv, const std::string& out_path);

}  // namespace stzcli
