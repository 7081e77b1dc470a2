// The documentation checked against the programs and the library:
//  - every long option of each command's --help is in its man page's OPTIONS, and back;
//  - the GGML format table of docs/FORMATS.md is the library's type table (kTypeTable), and every
//    count of quantized formats the documents give is the table's;
//  - README.md, docs/ and man/ name no machine paths and no documents outside the repository, and
//    their relative links lead to files of the repository.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "gguftool/types.hpp"

namespace gguftool::test {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = GGUFTOOL_SOURCE_DIR;

// A document or man page that must be there.
std::string read_text(const fs::path &p) {
    EXPECT_TRUE(fs::is_regular_file(p)) << "cannot read " << p;
    return testkit::read_text(p);
}

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// The documents: README.md, docs/*.md and man/*.1.
std::vector<fs::path> documents() {
    std::vector<fs::path> out = {kSource / "README.md"};
    for (const char *dir : {"docs", "man"})
        for (const fs::directory_entry &e : fs::directory_iterator(kSource / dir)) out.push_back(e);
    std::sort(out.begin() + 1, out.end());
    return out;
}

// ---------------------------------------------------------------------------------------------
// --help against the man pages.

// The commands: the man page of each, and the program whose --help is checked against it (the
// ONNX commands are gguftool-onnx's; gguftool hands them over to it).
struct Command {
    std::string name;  // "" for the program itself (man/gguftool.1)
    bool onnx;
};
const Command kCommands[] = {
    {"", false},
    {"dump", false},
    {"diff", false},
    {"split", false},
    {"merge", false},
    {"edit", false},
    {"convert-endian", false},
    {"hash", false},
    {"tokenizer", false},
    {"to-onnx", true},
    {"run", true},
    {"lower", true},
    {"verify", true},
    {"generate", true},
};

void PrintTo(const Command &c, std::ostream *os) {
    *os << (c.name.empty() ? "gguftool" : c.name);
}

std::string program(bool onnx) {
    return onnx ? (fs::path(GGUFTOOL_EXE).parent_path() / "gguftool-onnx").string()
                : std::string(GGUFTOOL_EXE);
}

std::string help_of(const Command &c) {
    std::vector<std::string> argv = {program(c.onnx)};
    if (!c.name.empty()) argv.push_back(c.name);
    argv.push_back("--help");
    const testkit::ProcessResult r = testkit::run(argv);
    EXPECT_EQ(r.status, 0) << c.name << ": " << r.err;
    return r.out;
}

// CLI11's option lines: indented by 2 (4 in an option group), the names first, comma-separated
// ("-o,--output OUT Excludes: --in-place"); descriptions are indented further.
std::set<std::string> help_options(const std::string &help) {
    static const std::regex kOptionLine(R"(^ {2,4}(-[^ ]+))");
    std::set<std::string> out;
    for (const std::string &line : lines_of(help)) {
        std::smatch m;
        if (!std::regex_search(line, m, kOptionLine)) continue;
        std::istringstream names(m[1].str());
        for (std::string name; std::getline(names, name, ',');)
            if (name.starts_with("--")) out.insert(name);
    }
    return out;
}

// The long options an OPTIONS section defines: those on each .TP tag line (the line after .TP),
// with troff's escapes undone. Options named in the prose of an entry are not definitions.
std::set<std::string> man_options(const fs::path &page) {
    static const std::regex kFont(R"(\\f[BIRP])"), kMinus(R"(\\-)");
    static const std::regex kLong(R"(--[a-z0-9][a-z0-9-]*)");
    const std::vector<std::string> lines = lines_of(read_text(page));
    std::set<std::string> out;
    bool inside = false;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].starts_with(".SH")) inside = lines[i] == ".SH OPTIONS";
        if (!inside || !lines[i].starts_with(".TP") || i + 1 == lines.size()) continue;
        const std::string tag =
            std::regex_replace(std::regex_replace(lines[i + 1], kFont, ""), kMinus, "-");
        for (std::sregex_iterator m(tag.begin(), tag.end(), kLong), end; m != end; ++m)
            out.insert(m->str());
    }
    return out;
}

fs::path man_page(const Command &c) {
    return kSource / "man" / (c.name.empty() ? "gguftool.1" : "gguftool-" + c.name + ".1");
}

class ManPage : public ::testing::TestWithParam<Command> {};

TEST_P(ManPage, OptionsAreTheHelpsOptions) {
    const Command &c = GetParam();
    const std::set<std::string> help = help_options(help_of(c));
    const std::set<std::string> man = man_options(man_page(c));
    ASSERT_FALSE(help.empty()) << "no options found in the --help of " << c.name;
    for (const std::string &o : help)
        EXPECT_TRUE(man.count(o)) << o << " is in --help but not in the OPTIONS of "
                                  << man_page(c).filename();
    for (const std::string &o : man)
        EXPECT_TRUE(help.count(o))
            << o << " is in the OPTIONS of " << man_page(c).filename() << " but not in --help";
}

INSTANTIATE_TEST_SUITE_P(Commands, ManPage, ::testing::ValuesIn(kCommands),
                         [](const ::testing::TestParamInfo<Command> &p) {
                             std::string n = p.param.name.empty() ? "gguftool" : p.param.name;
                             std::replace(n.begin(), n.end(), '-', '_');
                             return n;
                         });

// The commands above are every command gguftool-onnx lists, and every man page is one of theirs.
TEST(ManPages, OneForEveryCommand) {
    const std::string help = help_of({"", true});
    std::set<std::string> listed;
    bool inside = false;
    for (const std::string &line : lines_of(help)) {
        if (line.starts_with("Subcommands:"))
            inside = true;
        else if (inside && line.starts_with("  ") && line[2] != ' ')
            listed.insert(line.substr(2, line.find(' ', 2) - 2));
    }
    std::set<std::string> tested, pages;
    for (const Command &c : kCommands) tested.insert(c.name);
    tested.erase("");
    EXPECT_EQ(listed, tested);
    for (const fs::directory_entry &e : fs::directory_iterator(kSource / "man")) {
        std::string name = e.path().filename().string();
        if (name == "gguftool.1") continue;
        ASSERT_TRUE(name.starts_with("gguftool-") && name.ends_with(".1")) << name;
        pages.insert(name.substr(9, name.size() - 11));
    }
    EXPECT_EQ(pages, tested);
}

// ---------------------------------------------------------------------------------------------
// Formats.

std::vector<std::string> cells_of(const std::string &row) {
    std::vector<std::string> out;
    std::istringstream in(row.substr(1));
    for (std::string cell; std::getline(in, cell, '|');) {
        cell.erase(0, cell.find_first_not_of(' '));
        cell.erase(cell.find_last_not_of(' ') + 1);
        out.push_back(cell);
    }
    return out;
}

// Bits per weight as the table writes them: 8 x bytes / elements, up to three decimals, trailing
// zeros dropped (4.5, 2.625, 3.438).
std::string bits_text(const TypeTraits &t) {
    std::string s = fmt::format("{:.3f}", 8.0 * t.type_size / t.block_size);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
}

// docs/FORMATS.md's table: one row per type id the reader accepts, with ggml's name, block size,
// bytes per block and bits per weight as the type table has them, and a decoder that exists; the
// retired ids named as rejected.
TEST(Docs, FormatTableIsTheTypeTable) {
    const std::string text = read_text(kSource / "docs" / "FORMATS.md");
    std::map<uint32_t, std::vector<std::string>> rows;
    for (const std::string &line : lines_of(text)) {
        if (!line.starts_with("| ")) continue;
        const std::vector<std::string> cells = cells_of(line);
        if (cells.empty() || cells[0].empty() || !std::isdigit(uint8_t(cells[0][0]))) continue;
        const uint32_t id = uint32_t(std::stoul(cells[0]));
        EXPECT_TRUE(rows.emplace(id, cells).second) << "id " << id << " twice";
    }
    for (uint32_t id = 0; id < kGgmlTypeCount; ++id) {
        const TypeTraits &t = kTypeTable[id];
        if (t.removed) {
            EXPECT_FALSE(rows.count(id)) << "retired id " << id << " (" << t.name << ") has a row";
            EXPECT_NE(text.find(t.name), std::string::npos)
                << "the retired " << t.name << " is not named";
            continue;
        }
        ASSERT_TRUE(rows.count(id)) << "no row for id " << id << " (" << t.name << ")";
        const std::vector<std::string> &c = rows[id];
        ASSERT_GE(c.size(), 6u) << "id " << id;
        EXPECT_EQ(c[1], t.name) << "id " << id;
        EXPECT_EQ(c[2], std::to_string(t.block_size)) << t.name;
        EXPECT_EQ(c[3], std::to_string(t.type_size)) << t.name;
        EXPECT_EQ(c[4], bits_text(t)) << t.name;
        if (t.quantized) {
            const std::string file = c[5].substr(0, c[5].find(' '));
            EXPECT_TRUE(file.starts_with("formats/") && fs::exists(kSource / file))
                << t.name << ": decoder " << c[5];
        } else {
            EXPECT_EQ(c[5], "plain conversion") << t.name;
        }
    }
    EXPECT_EQ(rows.size(), size_t(std::count_if(std::begin(kTypeTable), std::end(kTypeTable),
                                                [](const TypeTraits &t) { return !t.removed; })));
}

// "27 GGML quant formats", "the 27 GGUF formats", "all 27 formats": every count of formats the
// documents give is the number of quantized types in the table.
TEST(Docs, FormatCountsAreTheTypeTables) {
    const auto quantized = std::count_if(std::begin(kTypeTable), std::end(kTypeTable),
                                         [](const TypeTraits &t) { return t.quantized; });
    static const std::regex kCount(
        R"(\b(\d+) (?:GGML |GGUF |ggml )?(?:quant(?:ized)? |block )?formats\b)");
    size_t seen = 0;
    for (const fs::path &doc : documents()) {
        const std::string text = read_text(doc);
        for (std::sregex_iterator m(text.begin(), text.end(), kCount), end; m != end; ++m, ++seen)
            EXPECT_EQ(std::stol((*m)[1]), quantized) << doc.filename() << ": \"" << m->str() << '"';
    }
    EXPECT_GT(seen, 0u) << "no document gives the number of formats";
}

// ---------------------------------------------------------------------------------------------
// Stand-alone documents.

TEST(Docs, NoMachinePathsOrOutsideDocuments) {
    static const std::regex kBad(
        R"(/work/|/root/|/tmp/[a-z]|MODEL-FACTS|CANN-FACTS|TOKENIZER-FACTS|WAVE4-FACTS|\.\./shared/llm)");
    for (const fs::path &doc : documents()) {
        const std::vector<std::string> lines = lines_of(read_text(doc));
        for (size_t i = 0; i < lines.size(); ++i)
            EXPECT_FALSE(std::regex_search(lines[i], kBad))
                << doc.filename() << ":" << i + 1 << ": " << lines[i];
    }
}

// The anchors of a Markdown file's headings, as GitHub makes them: lower case, punctuation other
// than '-' and '_' dropped, spaces as '-'.
std::set<std::string> anchors_of(const std::string &markdown) {
    std::set<std::string> out;
    bool fenced = false;
    for (const std::string &line : lines_of(markdown)) {
        if (line.starts_with("```")) fenced = !fenced;
        if (fenced || !line.starts_with("#")) continue;
        std::string anchor;
        for (const char c : line.substr(line.find(' ') + 1)) {
            const auto u = static_cast<unsigned char>(c);
            if (std::isalnum(u) || c == '-' || c == '_' || u >= 0x80)
                anchor += char(std::tolower(u));
            else if (c == ' ')
                anchor += '-';
        }
        out.insert(anchor);
    }
    return out;
}

// Markdown links to files ("[text](docs/X.md)", "(../man/gguftool-run.1)") lead to a file of the
// repository, and a link to a heading ("(BENCHMARKS.md#decoder)", "(#decoder)") to one that exists.
TEST(Docs, RelativeLinksResolve) {
    static const std::regex kLink(R"(\]\(([^)#\s]*)(?:#([^)\s]*))?\))");
    size_t links = 0;
    for (const fs::path &doc : documents()) {
        if (doc.extension() != ".md") continue;
        const std::string text = read_text(doc);
        for (std::sregex_iterator m(text.begin(), text.end(), kLink), end; m != end; ++m) {
            const std::string target = (*m)[1], anchor = (*m)[2];
            if (target.find("://") != std::string::npos || target.starts_with("mailto:")) continue;
            ++links;
            const fs::path p =
                target.empty() ? doc : (doc.parent_path() / target).lexically_normal();
            EXPECT_TRUE(fs::exists(p)) << doc.filename() << ": " << target;
            EXPECT_TRUE(p.string().starts_with(kSource.lexically_normal().string()))
                << doc.filename() << ": " << target << " leaves the repository";
            if (!anchor.empty() && p.extension() == ".md" && fs::exists(p)) {
                EXPECT_TRUE(anchors_of(read_text(p)).count(anchor))
                    << doc.filename() << ": no heading #" << anchor << " in " << p.filename();
            }
        }
    }
    EXPECT_GT(links, 0u);
}

}  // namespace
}  // namespace gguftool::test
