// edit --in-place: a new GGUF header written over the old one, the tensor data left where it is.
#pragma once

#include <cstdint>
#include <span>

#include "gguftool/gguf.hpp"

namespace gguftool::cli {

// Overwrites the first header.size() bytes of `file` (which must be exactly its data offset: the
// data does not move) with `header`, by one write of the complete header built in memory, then
// syncs it to the disk.
//
// What survives what: SIGINT, SIGTERM and SIGHUP wait until the write is done (the file then
// holds the whole new header); a failed or short write puts the old header back and throws
// gguftool::Error. What no program can rule out is a power failure or kernel crash during the
// write itself, which may leave part of each header (a new file, edit -o, does not have that
// risk). Refuses, writing nothing, if `file`'s path now names another file than the one opened.
void overwrite_header(const gguf::File &file, std::span<const uint8_t> header);

}  // namespace gguftool::cli
