// The lab's output files: every command creates a missing parent directory (as `run` has done
// since 2026-12-05; `sweep`, `whatif` and `pipeline` did not until 2026-12-06) and names on
// stderr a file it could not write, so the command can exit 1 (exit_failure).
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace lab {

/// Creates the parent directories of `path`, if it has any; a failure shows when the file is
/// opened.
inline void make_parent(const std::filesystem::path& path) {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
}

/// Whether `path` could be written, asked without creating or touching anything: an existing
/// file this process may write, or a new one under the nearest existing ancestor directory
/// (the missing ones would be created). So a command with several outputs can refuse a bad
/// one before it has made the others' directories or files.
inline bool could_write(const std::filesystem::path& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::exists(st)) return !fs::is_directory(st) && ::access(path.c_str(), W_OK) == 0;
    fs::path dir = path.parent_path();
    for (;;) {
        if (dir.empty()) dir = ".";
        const fs::file_status d = fs::status(dir, ec);
        if (fs::exists(d)) return fs::is_directory(d) && ::access(dir.c_str(), W_OK | X_OK) == 0;
        if (dir == dir.parent_path()) return false;
        dir = dir.parent_path();
    }
}

/// The files this process has written through write_output(), in order.
inline std::vector<std::filesystem::path>& outputs_written() {
    static std::vector<std::filesystem::path> paths;
    return paths;
}

/// The output this process already wrote that `path` names (the same file, however spelled),
/// or an empty path.
inline std::filesystem::path written_as(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return {};
    for (const auto& p : outputs_written())
        if (std::filesystem::equivalent(path, p, ec)) return p;
    return {};
}

/// Writes `text` to `path` (parents created); on failure prints "qlimits-lab CMD: cannot write
/// PATH" on stderr and returns false. A path that names a file this command already wrote
/// (`run --json DIR/index.html --svg DIR`: review 2026-12-06, the JSON was lost with exit 0) is
/// refused the same way, naming the output it would have overwritten, which is kept.
inline bool write_output(const char* cmd, const std::filesystem::path& path,
                         std::string_view text) {
    if (const auto first = written_as(path); !first.empty()) {
        std::fprintf(stderr,
                     "qlimits-lab %s: cannot write %s: it is %s, another output of this command "
                     "(kept)\n",
                     cmd, path.string().c_str(), first.string().c_str());
        return false;
    }
    make_parent(path);
    std::ofstream f(path, std::ios::binary);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.close();
    if (!f) {
        std::fprintf(stderr, "qlimits-lab %s: cannot write %s\n", cmd, path.string().c_str());
        return false;
    }
    outputs_written().push_back(path);
    return true;
}

} // namespace lab
