// The operator table as others see it: the list gguftool-run(1) gives (typed by hand, so checked
// here against supported_operators()), the CPU backend's rows (one for every operator), and what
// a backend's row promises (a row without a kernel, a kernel attribute that is missing).
#include <map>
#include <sstream>

#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

#define EXPECT_HAS(haystack, needle) \
    EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

using Listing = std::map<std::pair<std::string, std::string>, std::vector<int>>;

// The operators of gguftool-run(1)'s "Operators" section: the tag line after each .TP lists them
// (".BR Slice\-10 ", " Transpose\-1 ", " Range\-11 ", " \-27"), a bare "\-27" being another
// version of the operator before it; a ".B com.microsoft" line starts that domain's operators.
// Problems with the page itself go to `errors`.
Listing man_page_operators(const std::string &page, std::vector<std::string> &errors) {
    Listing listed;
    std::istringstream in(page);
    std::string line, domain;
    bool in_section = false, tag = false;
    while (std::getline(in, line)) {
        if (line.starts_with(".SS ")) {
            in_section = line == ".SS Operators";
            continue;
        }
        if (!in_section) continue;
        if (line == ".TP") {
            tag = true;
            continue;
        }
        if (!tag) {
            if (line == ".B com.microsoft") domain = "com.microsoft";
            continue;
        }
        tag = false;
        std::string names;
        if (line.starts_with(".BR "))
            names = line.substr(4);
        else if (line.starts_with(".B "))
            names = line.substr(3);
        else
            continue;  // a tag that names no operator
        for (size_t at; (at = names.find("\\-")) != std::string::npos;) names.replace(at, 2, "-");
        std::vector<std::string> items;
        for (size_t begin = 0;;) {
            const size_t end = names.find(" \", \" ", begin);
            items.push_back(names.substr(begin, end - begin));
            if (end == std::string::npos) break;
            begin = end + 6;
        }
        std::vector<int> *versions = nullptr;
        for (const std::string &item : items) {
            const size_t dash = item.rfind('-');
            const std::string name = dash == std::string::npos ? item : item.substr(0, dash);
            const std::string number = dash == std::string::npos ? "" : item.substr(dash + 1);
            const bool numeric =
                !number.empty() && number.find_first_not_of("0123456789") == std::string::npos;
            if (!numeric) {
                errors.push_back(fmt::format("\"{}\" has no version", item));
                continue;
            }
            if (!name.empty()) versions = &listed[{domain, name}];
            if (!versions) {
                errors.push_back(fmt::format("\"{}\" follows no operator", item));
                continue;
            }
            versions->push_back(std::stoi(number));
        }
    }
    return listed;
}

TEST(Operators, TheManPageListsEveryOperatorWithItsVersions) {
    const std::string page = read_text(std::string(GGUFTOOL_SOURCE_DIR) + "/man/gguftool-run.1");
    ASSERT_FALSE(page.empty());
    std::vector<std::string> errors;
    const Listing listed = man_page_operators(page, errors);
    EXPECT_TRUE(errors.empty()) << fmt::format("{}", fmt::join(errors, "\n"));

    Listing table;
    for (const rt::OperatorVersions &o : rt::supported_operators())
        table[{o.domain, o.op_type}] = o.versions;
    for (const auto &[key, versions] : table) {
        const std::string name = key.first.empty() ? key.second : key.first + "." + key.second;
        const auto it = listed.find(key);
        if (it == listed.end()) {
            ADD_FAILURE() << "gguftool-run.1 does not list " << name << "-"
                          << fmt::format("{}", fmt::join(versions, "/"));
            continue;
        }
        std::vector<int> sorted = it->second;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_EQ(sorted, versions) << name;
        EXPECT_EQ(sorted, it->second) << name << ": versions out of order";
    }
    for (const auto &[key, versions] : listed)
        EXPECT_TRUE(table.count(key)) << "gguftool-run.1 lists " << key.first << " " << key.second
                                      << ", which the runtime does not have";
    // The parser reads both domains (not an empty match of nothing).
    EXPECT_GE(listed.size(), 40u);
    EXPECT_TRUE(listed.count({"com.microsoft", "MatMulNBits"}));
}

// What the table says, against ONNX's operator changelog: the versions where the semantics
// change, ascending, once per operator.
TEST(Operators, SupportedOperatorsGivesEachOperatorOnceWithItsVersions) {
    std::map<std::pair<std::string, std::string>, std::vector<int>> seen;
    for (const rt::OperatorVersions &o : rt::supported_operators()) {
        EXPECT_TRUE(seen.emplace(std::pair(o.domain, o.op_type), o.versions).second)
            << o.op_type << " twice";
        EXPECT_TRUE(std::is_sorted(o.versions.begin(), o.versions.end())) << o.op_type;
    }
    EXPECT_EQ(seen.at({"", "Concat"}), (std::vector<int>{1, 4, 11}));  // axis required from 4
    EXPECT_EQ(seen.at({"", "Unsqueeze"}), (std::vector<int>{1, 11, 13}));
    EXPECT_EQ(seen.at({"", "DequantizePacked"}), (std::vector<int>{29}));
    EXPECT_EQ(seen.at({"com.microsoft", "GatherBlockQuantized"}), (std::vector<int>{1}));
    EXPECT_FALSE(seen.count({"com.microsoft", "Add"}));
}

// The CPU backend runs every operator of the table: a row for each, no refusal.
TEST(Operators, TheCpuBackendHasARowForEveryOperator) {
    const std::unique_ptr<rt::Backend> cpu = rt::make_cpu_backend(1);
    const std::vector<std::string> rows = cpu->op_types();
    for (const rt::OperatorVersions &o : rt::supported_operators()) {
        EXPECT_NE(std::find(rows.begin(), rows.end(), o.op_type), rows.end()) << o.op_type;
        rt::OpQuery q;
        q.op_type = o.op_type;
        q.version = o.versions.back();
        EXPECT_EQ(cpu->query(q).kind, rt::Capability::Kind::native) << o.op_type;
    }
    // The views and host-side values need no kernel; computing operators have one.
    EXPECT_EQ(cpu->kernel("Reshape"), nullptr);
    EXPECT_EQ(cpu->kernel("Constant"), nullptr);
    for (const char *op : {"Add", "Cast", "Slice", "OneHot", "DequantizePacked", "Unpack"})
        EXPECT_NE(cpu->kernel(op), nullptr) << op;
    rt::OpQuery unknown;
    unknown.op_type = "Conv";
    const rt::Capability c = cpu->query(unknown);
    EXPECT_EQ(c.kind, rt::Capability::Kind::unsupported);
    EXPECT_EQ(c.reason, "the cpu backend has no Conv");
}

// A backend whose row answers native but has no kernel: the session is made, and running the node
// is an error naming the backend, the operator and the node.
TEST(Operators, ARowWithoutAKernelIsAnErrorWhenTheNodeRuns) {
    struct Kernelless final : rt::Backend {
        std::unique_ptr<rt::Backend> cpu = rt::make_cpu_backend(1);
        Kernelless() { register_kernel("Neg", {}); }
        std::string name() const override { return "kernelless"; }
        rt::DeviceTensor allocate(DataType d, const rt::Shape &s) override {
            return cpu->allocate(d, s);
        }
        rt::DeviceTensor upload(const rt::Tensor &t) override { return cpu->upload(t); }
        rt::Tensor download(const rt::DeviceTensor &t) override { return cpu->download(t); }
    };
    ModelBuilder b;
    b.input("x", DataType::int32).output("y");
    b.node("Neg", {"x"}, {"y"}, {}, "neg");
    rt::Session s(b.model(), std::make_unique<Kernelless>(), rt::RunOptions{.fallback = false});
    try {
        s.run({{"x", tensor(DataType::int32, {1}, std::vector<int32_t>{3})}});
        FAIL() << "ran without a kernel";
    } catch (const Error &e) {
        EXPECT_HAS(std::string(e.what()), "node \"neg\"");
        EXPECT_HAS(std::string(e.what()), "the kernelless backend has no Neg kernel");
    }
}

TEST(Operators, AKernelAttributeThatIsMissingIsAnError) {
    rt::Attributes a;
    a.set("axis", int64_t(2));
    EXPECT_EQ(a.at<int64_t>("axis"), 2);
    try {
        (void)a.at<std::vector<int64_t>>("axis");  // there, but of another kind
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_HAS(std::string(e.what()), "'axis'");
    }
    EXPECT_THROW((void)a.at<std::string>("direction"), Error);
}

}  // namespace
}  // namespace gguftool::rttest
