// The lab's output files: every command creates a missing parent directory (as `run` has done
// since 2026-12-05; `sweep`, `whatif` and `pipeline` did not until 2026-12-06) and names on
// stderr a file it could not write, so the command can exit 1 (exit_failure).
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

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

/// Writes `text` to `path` (parents created); on failure prints "qlimits-lab CMD: cannot write
/// PATH" on stderr and returns false.
inline bool write_output(const char* cmd, const std::filesystem::path& path,
                         std::string_view text) {
    make_parent(path);
    std::ofstream f(path, std::ios::binary);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.close();
    if (!f) {
        std::fprintf(stderr, "qlimits-lab %s: cannot write %s\n", cmd, path.string().c_str());
        return false;
    }
    return true;
}

} // namespace lab
