// A hash table of indices into a caller's list of named things (internal to lib/gguf).
//
// Open addressing over one vector<uint32_t>: no node per entry. With 10,000 tensors the node
// allocations of std::unordered_map cost more than parsing the whole file.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "gguftool/prefault.hpp"

namespace gguftool::gguf::detail {

class NameTable {
public:
    static constexpr uint32_t kNone = UINT32_MAX;

    // `expected` entries are room-for, not a limit: the table grows as entries are added.
    explicit NameTable(uint64_t expected = 0) {
        size_t n = 16;
        while (n < 2 * expected && n < (1u << 17)) n *= 2;
        reserve_prefaulted(slots_, n);
        slots_.assign(n, kNone);
    }

    // Adds `index`, whose name is `name`, unless an entry of that name exists: then returns that
    // entry's index and adds nothing. `name_of(i)` gives the name of entry i.
    template <class NameOf>
    uint32_t insert(std::string_view name, uint32_t index, NameOf &&name_of) {
        if (2 * (size_ + 1) > slots_.size()) rehash_for(size_ + 1, name_of);
        for (size_t s = slot(name);; s = (s + 1) & mask()) {
            if (slots_[s] == kNone) {
                slots_[s] = index;
                ++size_;
                return kNone;
            }
            if (name_of(slots_[s]) == name) return slots_[s];
        }
    }

    template <class NameOf>
    uint32_t find(std::string_view name, NameOf &&name_of) const {
        for (size_t s = slot(name);; s = (s + 1) & mask()) {
            if (slots_[s] == kNone || name_of(slots_[s]) == name) return slots_[s];
        }
    }

private:
    size_t mask() const { return slots_.size() - 1; }
    size_t slot(std::string_view name) const { return std::hash<std::string_view>{}(name)&mask(); }

    template <class NameOf>
    void rehash_for(uint64_t entries, NameOf &&name_of) {
        size_t n = 16;
        while (n < 2 * entries) n *= 2;
        if (n <= slots_.size()) return;
        std::vector<uint32_t> old(n, kNone);
        old.swap(slots_);
        for (const uint32_t i : old) {
            if (i == kNone) continue;
            size_t s = slot(name_of(i));
            while (slots_[s] != kNone) s = (s + 1) & mask();
            slots_[s] = i;
        }
    }

    std::vector<uint32_t> slots_;
    uint64_t size_ = 0;
};

}  // namespace gguftool::gguf::detail
