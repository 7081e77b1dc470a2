// The tokenizer.ggml.pre table: one row per llama.cpp 0.5.0 pre-tokenizer type, with the names
// that select it, its regexes (llama.cpp's regex_exprs, copied verbatim from src/llama-vocab.cpp of
// the pinned release: the adapted forms that the HF Rust and JS engines also accept) and the flags
// llama.cpp's loader sets for those names.
#include <algorithm>
#include <string>

#include "tokenizer_impl.hpp"

namespace gguftool::tokenizer::detail {
namespace {

using Regexes = std::vector<std::string_view>;

// The tables are data: clang-format 14 splits their UTF-8 literals at a different place each
// time it runs (it is not idempotent on them), so it leaves them as they are.
// clang-format off

// LLAMA3, DBRX, SMAUG, CHATGLM4
const Regexes kLlama3 = {
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// JAIS2
const Regexes kJais2 = {
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|"
    "\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{"
    "1}",
};
// DEEPSEEK_LLM
const Regexes kDeepseekLlm = {
    "[\r\n]",
    "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-"
    "Ჿᴀ-"
    "ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-"
    "ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-"
    "𐳲𑢠-"
    "𑣟𞤀-𞥃]+",
    "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
    "\\s+$",
    "[一-龥ࠀ-一가-퟿]+",
    "\\p{N}+",
};
// DEEPSEEK3_LLM, HUNYUAN_DENSE, JOYAI_LLM, HY_V4
const Regexes kDeepseek3Llm = {
    "\\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
};
// SPARK2_5
const Regexes kSpark25 = {
    "\\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
    "\\p{N}",
};
// YOUTU
const Regexes kYoutu = {
    "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-"
    "ヿ]"
    "+",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'["
    "sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}"
    "\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'"
    "[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// DEEPSEEK_CODER
const Regexes kDeepseekCoder = {
    "[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}",
};
// FALCON
const Regexes kFalcon = {
    "[\\p{P}\\$\\+<=>\\^~\\|`]+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    "[0-9][0-9][0-9]",
};
// STARCODER, REFACT, COMMAND_R, SMOLLM, CODESHELL, EXAONE, MINERVA, MELLUM2
const Regexes kStarcoder = {
    "\\p{N}",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
};
// GPT2, MPT, OLMO, JAIS, TRILLION, GRANITE_DOCLING
const Regexes kGpt2 = {
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
};
// STABLELM2, QWEN2, HUNYUAN, SOLAR_OPEN, GROK_2
const Regexes kStablelm2 = {
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// QWEN35
const Regexes kQwen35 = {
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]"
    "+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// PORO, BLOOM, GPT3_FINNISH
const Regexes kPoro = {
    " ?[^(\\s|.,!?…。，、।۔،)]+",
};
// VIKING
const Regexes kViking = {
    " ?[^(\\s|.,!?…。，、।۔،)]+",
    "\\p{N}",
};
// TEKKEN
const Regexes kTekken = {
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?"
    "=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// CHAMELEON
const Regexes kChameleon = {
    "<sentinel:[0-9]+>",
    "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
    "([\\t\\n]|    |  )",
    "\\p{N}",
    "[\\p{P}!-/:-@\\[-`{-~]",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
};
// GPT4O, MINIMAX_M2
const Regexes kGpt4O = {
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'"
    "[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^"
    "A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// GRANITE_EMB_MULTI
const Regexes kGraniteEmbMulti = {
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+(?:'[sS]|'[tT]"
    "|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z])"
    ")+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{"
    "N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// TINY_AYA
const Regexes kTinyAya = {
    "\\d{1,3}(?=(?:\\d{3})*\\b)",
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'["
    "sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}"
    "\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'"
    "[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// KIMI_K2
const Regexes kKimiK2 = {
    "\\p{Han}+",
};
// SUPERBPE
const Regexes kSuperbpe = {
    "\\p{N}+",
    "(?=(\\d{3})+(?!\\d))",
};
// BAILINGMOE
const Regexes kBailingmoe = {
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
};
// SEED_CODER
const Regexes kSeedCoder = {
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// UFAKZEKA
const Regexes kUfakzeka = {
    "[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// AFMOE
const Regexes kAfmoe = {
    "\\p{AFMoE_digits}",
    "[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-"
    "ᇿ]"
    "+",
    "[!\"#$%&'()*+,\\-./"
    ":;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
    "?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// LAGUNA
const Regexes kLaguna = {
    "[^\\n]+|[\\n]+",
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// EXAONE_MOE
const Regexes kExaoneMoe = {
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{"
    "M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
};
// GEMMA4, SARVAM_MOE
const Regexes kGemma4 = {
    "[^\\n]+|[\\n]+",
};
// MINICPM5
const Regexes kMinicpm5 = {
    "\\p{N}{1,3}",
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// WHITESPACE
const Regexes kWhitespace = {
    "\\S+",
};
// DEFAULT
const Regexes kDefault = {
    "[\\p{P}\\$\\+<=>\\^~\\|]+",
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)",
    "\\p{N}+",
    "[0-9][0-9][0-9]",
};

// clang-format on

// The regex that llama.cpp's custom AFMoE digit splitter (also used for tiny_aya's
// "\d{1,3}(?=(?:\d{3})*\b)") implements: every run of \p{N} in groups of three from the right.
constexpr std::string_view kDigitGroups = "\\p{N}{1,3}(?=(?:\\p{N}{3})*(?!\\p{N}))";

const Regexes kTinyAyaSplit = {kDigitGroups, kTinyAya[1]};
const Regexes kAfmoeSplit = {kDigitGroups, kAfmoe[1], kAfmoe[2]};
// superbpe's zero-width splitter runs in std::regex, where \d is ASCII.
const Regexes kSuperbpeSplit = {kSuperbpe[0], "(?=([0-9]{3})+(?![0-9]))"};

// Flags: what llama.cpp's loader sets for the names (defaults: clean_spaces, nothing else).
const std::vector<PreRow> kRows = {
    {{"default", ""}, &kDefault, {}},
    {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
      "jina-v5-nano"},
     &kLlama3,
     {.ignore_merges = true, .add_bos = true}},
    {{"dbrx", "smaug-bpe"}, &kLlama3, {}},
    {{"glm4", "chatglm-bpe"}, &kLlama3, {.no_bos = true}},
    {{"jais-2"}, &kJais2, {}},
    {{"deepseek-llm"}, &kDeepseekLlm, {.clean_spaces = false}},
    {{"deepseek-coder"}, &kDeepseekCoder, {.clean_spaces = false}},
    {{"deepseek-v3", "hunyuan-dense", "hy_v4", "joyai-llm"},
     &kDeepseek3Llm,
     {.clean_spaces = false}},
    {{"spark2_5"}, &kSpark25, {.clean_spaces = false}},
    {{"youtu"}, &kYoutu, {.clean_spaces = false, .ignore_merges = true}},
    {{"falcon"}, &kFalcon, {}},
    {{"starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"}, &kStarcoder, {}},
    {{"command-r", "smollm"}, &kStarcoder, {.clean_spaces = false}},
    {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
      "mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais"},
     &kGpt2,
     {}},
    {{"jina-v1-en", "jina-v2-code", "roberta-bpe"}, &kGpt2, {.add_sep = true}},
    {{"trillion", "granite-docling"}, &kGpt2, {.clean_spaces = false}},
    {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open", "grok-2"},
     &kStablelm2,
     {.clean_spaces = false}},
    {{"stablelm2", "megrez"}, &kStablelm2, {}},
    {{"qwen35"}, &kQwen35, {.clean_spaces = false}},
    {{"bloom", "gpt3-finnish"}, &kPoro, {}},
    {{"poro-chat"}, &kPoro, {.clean_spaces = false}},
    {{"viking"}, &kViking, {.clean_spaces = false}},
    {{"tekken"}, &kTekken, {.clean_spaces = false, .ignore_merges = true, .add_bos = true}},
    {{"chameleon"}, &kChameleon, {.clean_spaces = false, .add_bos = true}},
    {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, &kGpt4O, {.clean_spaces = false}},
    {{"granite-embed-multi-97m"},
     &kGraniteEmbMulti,
     {.clean_spaces = false, .ignore_merges = true}},
    {{"tiny_aya", "cohere2moe"}, &kTinyAyaSplit, {.clean_spaces = false}},
    {{"superbpe"}, &kSuperbpeSplit, {.clean_spaces = false}},
    {{"bailingmoe", "bailingmoe2", "llada-moe"}, &kBailingmoe, {.clean_spaces = false}},
    {{"seed-coder"}, &kSeedCoder, {.clean_spaces = false}},
    {{"ufakzeka"}, &kUfakzeka, {.clean_spaces = false}},
    {{"afmoe"}, &kAfmoeSplit, {.clean_spaces = false}},
    {{"laguna"}, &kLaguna, {.clean_spaces = false}},
    {{"exaone-moe"}, &kExaoneMoe, {}},
    {{"minicpm5"}, &kMinicpm5, {.ignore_merges = true}},
    {{"gemma4", "granite-embed-multi-311m"},
     &kGemma4,
     {.add_bos = true, .raw_utf8 = true, .newline_runs_whole = true, .force_add_bos = true}},
    {{"sarvam-moe"}, &kGemma4, {.clean_spaces = false, .raw_utf8 = true}},
    {{"kimi-k2"},
     &kKimiK2,
     {.clean_spaces = false},
     "its letters exclude Han characters (\\p{Han}+ triggers a custom C++ splitter), which "
     "transformers.js's regex engine cannot express"},
    {{"whitespace"},
     &kWhitespace,
     {},
     "llama.cpp tokenizes it with a custom whitespace session (word splitting and lowercasing) "
     "that "
     "no tokenizer.json reproduces"},
};

// llama.cpp's std::regex path collapses \p{Lu}, \p{Ll}, \p{Lt}, \p{Lm} and \p{Lo} to one letter
// class (unicode.cpp k_ucat_enum): written as \p{L}, the regex splits as llama.cpp does.
std::string as_llama_reads_it(std::string_view regex) {
    std::string s(regex);
    for (const std::string_view sub : {"\\p{Lu}", "\\p{Ll}", "\\p{Lt}", "\\p{Lm}", "\\p{Lo}"})
        for (size_t at; (at = s.find(sub)) != std::string::npos;)
            s.replace(at, sub.size(), "\\p{L}");
    return s;
}

}  // namespace

const PreRow *find_pre(std::string_view name) {
    for (const PreRow &row : kRows)
        if (std::find(row.names.begin(), row.names.end(), name) != row.names.end()) return &row;
    return nullptr;
}

std::vector<std::string> split_regexes(const PreRow &row) {
    std::vector<std::string> out;
    for (const std::string_view r : *row.regexes) out.push_back(as_llama_reads_it(r));
    return out;
}

const std::vector<PreRow> &pre_rows() {
    return kRows;
}

}  // namespace gguftool::tokenizer::detail
