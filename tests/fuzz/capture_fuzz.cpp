// libFuzzer target: the capture reader (qlimits/capture/format.hpp). Any input must end in a
// clean error (a line number within the input, a reason, nothing kept) or in a capture whose
// records satisfy the format's rules; an accepted capture, written again through a
// capture_log, must read back to the same records. A broken rule traps (a finding).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "qlimits/capture/format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    qlimits::capture_data d;
    const qlimits::capture_read_result r = qlimits::read_capture(text, d);
    if (!r.ok) {
        std::size_t lines = 1;
        for (const char c : text)
            lines += c == '\n';
        if (r.reason.empty() || r.line > lines)
            __builtin_trap();
        if (!d.items.empty() || !d.completions.empty() || !d.services.empty() || !d.meta.empty())
            __builtin_trap();
        return 0;
    }
    for (std::size_t k = 0; k < d.items.size(); ++k) {
        const auto& it = d.items[k];
        // (Zero units are allowed: an item the policy counts as nothing.)
        if (it.wanted_ns > it.entered_ns || it.entered_ns > it.done_ns)
            __builtin_trap();
        if (k > 0 && it.entered_ns < d.items[k - 1].entered_ns)
            __builtin_trap();
    }
    for (const auto& s : d.services)
        if (s.start_ns > s.end_ns || s.items == 0)
            __builtin_trap();

    // Round trip through the recorder and the writer (a log cannot be given drop counts: the
    // rules about completed and served totals hold only without them).
    if (d.dropped_items + d.dropped_completions + d.dropped_services != 0)
        return 0;
    qlimits::capture_log log(
        qlimits::capture_capacity{d.items.size(), d.completions.size(), d.services.size()});
    for (const auto& it : d.items) {
        log.wanted(it.wanted_ns);
        log.entered(it.units, it.entered_ns);
        log.sent(it.done_ns);
    }
    for (const auto& c : d.completions)
        log.completed(c.units, c.at_ns);
    for (const auto& s : d.services)
        log.served(s.items, s.start_ns, s.end_ns);
    std::string again;
    qlimits::write_capture(log, [&](std::string_view s) { again.append(s); });
    qlimits::capture_data back;
    if (!qlimits::read_capture(again, back).ok)
        __builtin_trap();
    if (back.items.size() != d.items.size() || back.completions.size() != d.completions.size() ||
        back.services.size() != d.services.size())
        __builtin_trap();
    for (std::size_t k = 0; k < d.items.size(); ++k)
        if (back.items[k].wanted_ns != d.items[k].wanted_ns ||
            back.items[k].done_ns != d.items[k].done_ns || back.items[k].units != d.items[k].units)
            __builtin_trap();
    return 0;
}
