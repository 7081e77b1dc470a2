// llama.cpp's logits for a prompt, through libllama loaded at run time (llama_reference.hpp):
// what `gguftool verify --decoder` compares against, for checking by hand. And llama.cpp's model
// quantizer.
//
//   llama_logits MODEL.gguf (--ids 1,2,3 | --text STRING) [--steps N] [--top K] [--threads T]
//                [--ctx N]
//       decodes the prompt as one batch, then N greedy steps one token at a time, and prints for
//       every position its token, the argmax and the K largest logits (default 5)
//   llama_logits --quantize IN OUT FTYPE      (FTYPE as llama-quantize names it: Q4_K_M, Q8_0, ...)
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "gguftool/error.hpp"
#include "gguftool/llama_reference.hpp"

namespace {

using gguftool::reference::LlamaModel;

int usage() {
    fmt::print(stderr,
               "usage: llama_logits MODEL.gguf (--ids 1,2,3 | --text STRING) [--steps N] "
               "[--top K] [--threads T] [--ctx N]\n"
               "       llama_logits --quantize IN OUT FTYPE\n");
    return 2;
}

std::vector<int32_t> parse_ids(const std::string &s) {
    std::vector<int32_t> ids;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t comma = std::min(s.find(',', start), s.size());
        ids.push_back(int32_t(std::stol(s.substr(start, comma - start))));
        start = comma + 1;
    }
    return ids;
}

// A piece as text, with control characters escaped, and a lone byte (a byte token's piece) that
// is not ASCII as \xNN.
std::string printable(const std::string &piece) {
    if (piece.size() == 1 && static_cast<unsigned char>(piece[0]) >= 0x80)
        return fmt::format("\\x{:02x}", static_cast<unsigned char>(piece[0]));
    std::string out;
    for (unsigned char c : piece) {
        if (c == '\n')
            out += "\\n";
        else if (c < 0x20 || c == 0x7f)
            out += fmt::format("\\x{:02x}", c);
        else
            out += char(c);
    }
    return out;
}

void print_row(const LlamaModel &m, size_t pos, int32_t token, const float *row, int top) {
    const int v = m.n_vocab();
    std::vector<int32_t> order(static_cast<size_t>(v));
    std::iota(order.begin(), order.end(), 0);
    const int k = std::min(top, v);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
        return row[a] > row[b] || (row[a] == row[b] && a < b);
    });
    fmt::print("pos {:4} token {:6} {:>12} -> argmax {:6} {:>12}  top:", pos, token,
               fmt::format("'{}'", printable(m.token_to_piece(token, true))), order[0],
               fmt::format("'{}'", printable(m.token_to_piece(order[0], true))));
    for (int i = 0; i < k; ++i) fmt::print(" {}:{:.6f}", order[size_t(i)], row[order[size_t(i)]]);
    fmt::print("\n");
}

int run(int argc, char **argv) {
    std::string why;
    if (argc >= 2 && std::string(argv[1]) == "--quantize") {
        if (argc != 5) return usage();
        const std::optional<int> ftype = gguftool::reference::llama_ftype_from_name(argv[4]);
        if (!ftype) {
            fmt::print(stderr, "llama_logits: unknown file type {}\n", argv[4]);
            return 2;
        }
        const auto lib = gguftool::reference::load_llama(&why);
        if (!lib) {
            fmt::print(stderr, "llama_logits: {}\n", why);
            return 1;
        }
        gguftool::reference::quantize_model(lib, argv[2], argv[3], *ftype);
        fmt::print("wrote {} ({})\n", argv[3], gguftool::reference::llama_ftype_name(*ftype));
        return 0;
    }

    std::string model_path, text;
    std::vector<int32_t> ids;
    int steps = 0, top = 5, n_ctx = 0;
    unsigned threads = 0;
    bool have_text = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--ids" && has_value)
            ids = parse_ids(argv[++i]);
        else if (a == "--text" && has_value)
            text = argv[++i], have_text = true;
        else if (a == "--steps" && has_value)
            steps = std::stoi(argv[++i]);
        else if (a == "--top" && has_value)
            top = std::stoi(argv[++i]);
        else if (a == "--threads" && has_value)
            threads = unsigned(std::stoul(argv[++i]));
        else if (a == "--ctx" && has_value)
            n_ctx = std::stoi(argv[++i]);
        else if (model_path.empty() && !a.starts_with("--"))
            model_path = a;
        else
            return usage();
    }
    if (model_path.empty() || ids.empty() == !have_text || steps < 0 || top < 1) return usage();

    const auto lib = gguftool::reference::load_llama(&why);
    if (!lib) {
        fmt::print(stderr, "llama_logits: {}\n", why);
        return 1;
    }
    LlamaModel::Options options;
    // A text's token count is known only once the model is loaded: the default context then.
    options.n_ctx = n_ctx ? n_ctx : have_text ? 512 : std::max(16, int(ids.size()) + steps);
    options.threads = threads;
    LlamaModel m(lib, model_path, options);
    if (have_text) ids = m.tokenize(text, true, false);
    if (ids.empty()) return usage();
    fmt::print("{}: n_vocab {} n_layer {} n_embd {} n_head {} n_head_kv {} rope_type {} n_swa {}\n",
               model_path, m.n_vocab(), m.n_layer(), m.n_embd(), m.n_head(), m.n_head_kv(),
               m.rope_type(), m.n_swa());
    fmt::print("libllama {} ({})\n", gguftool::reference::llama_lib_path(*lib),
               gguftool::reference::llama_lib_version(*lib));

    const size_t v = size_t(m.n_vocab());
    std::vector<float> logits = m.decode(ids, 0);
    for (size_t i = 0; i < ids.size(); ++i) print_row(m, i, ids[i], logits.data() + i * v, top);
    const float *last = logits.data() + (ids.size() - 1) * v;
    std::vector<float> step_logits;
    for (int s = 0; s < steps; ++s) {
        const int32_t next = int32_t(std::max_element(last, last + v) - last);
        const size_t pos = ids.size();
        ids.push_back(next);
        step_logits = m.decode(std::span(&ids.back(), 1), int32_t(pos));
        last = step_logits.data();
        print_row(m, pos, next, last, top);
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {
        fmt::print(stderr, "llama_logits: {}\n", e.what());
        return 1;
    }
}
