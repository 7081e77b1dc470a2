// llama.cpp's own tokenizer test vectors: models/ggml-vocab-*.gguf with their .inp/.out files, from
// the source tree of the pinned libllama, which npm's node-llama-cpp@3.22.1 ships as
// llama/gitRelease.bundle (a git bundle of llama.cpp at de3ff815). Fetched on first use with
// `npm pack`, unpacked with tar and git into the build tree's cache (testkit-cache) under a lock,
// so that concurrent test processes fetch them once; never committed.
#pragma once

#include <string>
#include <vector>

namespace gguftool::testkit {

// The directory holding ggml-vocab-*.gguf (+ .inp/.out). Throws std::runtime_error (saying what
// failed: npm, the network, git) when they cannot be had: a test needing them fails.
std::string llama_vocab_dir();

// One vector file: the chunks of NAME.gguf.inp and the ids of NAME.gguf.out, split as llama.cpp's
// tests/test-tokenizer-0.cpp splits them. Empty when the vocabulary has no vectors.
struct VocabVectors {
    std::vector<std::string> texts;
    std::vector<std::vector<int>> ids;
};
VocabVectors read_vocab_vectors(const std::string &gguf_path);

}  // namespace gguftool::testkit
