// Test aid: while alive, contract violations are counted instead of aborting.
#pragma once

#include <atomic>

#include "qlimits/config.hpp"

namespace test {
class contract_probe {
public:
    contract_probe() noexcept {
        count_ref().store(0);
        previous_ = qlimits::set_contract_handler(&record);
    }
    ~contract_probe() { qlimits::set_contract_handler(previous_); }
    contract_probe(const contract_probe&) = delete;
    contract_probe& operator=(const contract_probe&) = delete;

    [[nodiscard]] int count() const noexcept { return count_ref().load(); }
    [[nodiscard]] qlimits::contract_violation last() const noexcept { return last_ref(); }

private:
    static std::atomic<int>& count_ref() noexcept {
        static std::atomic<int> n{0};
        return n;
    }
    static qlimits::contract_violation& last_ref() noexcept {
        static qlimits::contract_violation v{"", ""};
        return v;
    }
    static void record(const qlimits::contract_violation& v) noexcept {
        last_ref() = v;
        count_ref().fetch_add(1);
    }
    qlimits::contract_handler previous_;
};
} // namespace test
