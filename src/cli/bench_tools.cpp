#include "bench_tools.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "file_io.hpp"

extern char** environ;

namespace stzcli {

ScratchDir::ScratchDir() {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/statezip-bench-XXXXXX";
    CleanupSignalsHeld held;
    if (!::mkdtemp(tmpl.data())) throw stz::Error("cannot create a temporary folder in " + tmpl.substr(0, tmpl.rfind('/')) +
                                                  ": " + std::strerror(errno));
    dir_ = tmpl;
    slots_.push_back(register_cleanup(dir_, true));
}

ScratchDir::~ScratchDir() {
    for (const auto& f : files_) ::unlink(f.c_str());
    ::rmdir(dir_.c_str());
    for (int s : slots_) unregister_cleanup(s);
}

std::string ScratchDir::create_file(const std::string& name) {
    std::string p = dir_ + "/" + name;
    CleanupSignalsHeld held;
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw stz::Error("cannot create " + p + ": " + std::strerror(errno));
    ::close(fd);
    files_.push_back(p);
    slots_.push_back(register_cleanup(p, false));
    return p;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

bool have_tool(const std::string& tool) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin:/bin";
    size_t start = 0;
    for (;;) {
        size_t end = dirs.find(':', start);
        std::string d = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::string f = (d.empty() ? "." : d) + "/" + tool;
        struct stat st;
        if (::stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(f.c_str(), X_OK) == 0) return true;
        if (end == std::string::npos) return false;
        start = end + 1;
    }
}

double run_tool_timed(const std::vector<std::string>& argv, const std::string& out_path) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    // The file was made (O_EXCL, 0600) in our private folder: opening it by name is safe.
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW, 0);
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = -1;
    int rc = ::posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return -1;
    set_running_child(pid);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) break;
    set_running_child(0);
    auto t1 = std::chrono::steady_clock::now();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    return std::chrono::duration<double>(t1 - t0).count();
}

}  // namespace stzcli
