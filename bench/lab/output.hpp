// The lab's output files: every command creates a missing parent directory (as `run` has done
// since 2026-12-05; `sweep`, `whatif` and `pipeline` did not until 2026-12-06) and names on
// stderr a file it could not write, so the command can exit 1 (exit_failure).
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>

namespace lab {

/// Creates the parent directories of `path`, if it has any; a failure shows when the file is
/// opened.
inline void make_parent(const std::filesystem::path& path) {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
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
