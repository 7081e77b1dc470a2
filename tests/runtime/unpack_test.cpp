// Unpack-29: the spec's examples, random data packed by the spec's bit formula in every spelling,
// storage type and axis, and every validation error (each naming the node).
#include <random>

#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

constexpr const char *kNode = "unpack_under_test";

ModelBuilder unpack_model(std::initializer_list<onnx::AttributeProto> attrs) {
    ModelBuilder b;
    b.input("X").input("count").output("Y");
    b.node("Unpack", {"X", "count"}, {"Y"}, attrs, kNode);
    return b;
}

rt::Tensor unpack(std::initializer_list<onnx::AttributeProto> attrs, const rt::Tensor &x,
                  int64_t count) {
    return run1(unpack_model(attrs), {{"X", x}, {"count", scalar_i64(count)}});
}

std::string unpack_error(std::initializer_list<onnx::AttributeProto> attrs, const rt::Tensor &x,
                         const rt::Tensor &count) {
    return run_error(unpack_model(attrs), {{"X", x}, {"count", count}});
}

std::vector<uint8_t> codes(const rt::Tensor &t) {
    return t.to_vector<uint8_t>();
}

TEST(Unpack, SpecExamples) {
    // bits = 3, count = 8: [136, 198, 250] -> 0..7; count = 2: [255] -> [7, 7].
    EXPECT_EQ(codes(unpack({attr_int("bits", 3)}, bytes_u8({136, 198, 250}), 8)),
              (std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(codes(unpack({attr_int("bits", 3)}, bytes_u8({255}), 2)),
              (std::vector<uint8_t>{7, 7}));
    // R = 3, G = 5: [102] with count 5 -> [0, 1, 2, 0, 1]; [7] with count 2 -> [1, 2].
    const auto ternary = {attr_int("radix", 3), attr_int("group_size", 5)};
    EXPECT_EQ(codes(unpack(ternary, bytes_u8({102}), 5)), (std::vector<uint8_t>{0, 1, 2, 0, 1}));
    EXPECT_EQ(codes(unpack(ternary, bytes_u8({7}), 2)), (std::vector<uint8_t>{1, 2}));
    // The bits spelling is (R, G) = (2^bits, 1).
    EXPECT_EQ(codes(unpack({attr_int("radix", 8), attr_int("group_size", 1)}, bytes_u8({255}), 2)),
              (std::vector<uint8_t>{7, 7}));
}

TEST(Unpack, CountZeroAndEmptyRows) {
    const rt::Tensor y =
        unpack({attr_int("bits", 3)}, tensor<uint8_t>(DataType::uint8, {2, 0}, {}), 0);
    EXPECT_EQ(y.shape(), (rt::Shape{2, 0}));
    const rt::Tensor z = unpack({attr_int("bits", 5), attr_int("axis", 1)},
                                tensor<uint8_t>(DataType::uint8, {3, 0}, {}), 0);
    EXPECT_EQ(z.shape(), (rt::Shape{3, 0}));
    // A zero non-axis dimension keeps the size rule: 9 codes of 5 bits need 6 bytes.
    const rt::Tensor e =
        unpack({attr_int("bits", 5)}, tensor<uint8_t>(DataType::uint8, {0, 6}, {}), 9);
    EXPECT_EQ(e.shape(), (rt::Shape{0, 9}));
    EXPECT_NE(unpack_error({attr_int("bits", 5)}, tensor<uint8_t>(DataType::uint8, {0, 5}, {}),
                           scalar_i64(9)),
              "");
}

// Packs codes along `axis` by the spec's formula, runs Unpack, and expects the codes back.
struct Case {
    rt::Shape out_shape;
    int64_t axis;
    bool u32;
    int bits;  // 0: grouped
    int radix, group;
};

void check_round_trip(const Case &c, uint64_t seed) {
    SCOPED_TRACE(fmt::format("shape {} axis {} {} bits {} radix {} group {}",
                             rt::shape_string(c.out_shape), c.axis, c.u32 ? "uint32" : "uint8",
                             c.bits, c.radix, c.group));
    const uint64_t radix = c.bits ? (1u << c.bits) : uint64_t(c.radix);
    const uint64_t group = c.bits ? 1 : uint64_t(c.group);
    uint64_t limit = 1;
    for (uint64_t i = 0; i < group; ++i) limit *= radix;
    unsigned w = 0;
    while (w < 64 && (uint64_t(1) << w) < limit) ++w;  // ceil(log2(R^G))
    const unsigned word_bits = c.u32 ? 32 : 8;
    const size_t rank = c.out_shape.size();
    const size_t axis = size_t(c.axis < 0 ? c.axis + int64_t(rank) : c.axis);
    const uint64_t count = uint64_t(c.out_shape[axis]);
    const uint64_t groups = (count + group - 1) / group;
    const uint64_t words = (groups * w + word_bits - 1) / word_bits;
    uint64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= uint64_t(c.out_shape[d]);
    for (size_t d = axis + 1; d < rank; ++d) inner *= uint64_t(c.out_shape[d]);

    std::mt19937_64 rng(seed);
    std::vector<uint8_t> expected(outer * count * inner);
    for (uint8_t &v : expected) v = uint8_t(rng() % radix);
    std::vector<uint32_t> packed(outer * words * inner, 0);
    for (uint64_t o = 0; o < outer; ++o)
        for (uint64_t i = 0; i < inner; ++i)
            for (uint64_t j = 0; j < groups; ++j) {
                uint64_t idx = 0, scale = 1;
                for (uint64_t d = 0; d < group; ++d, scale *= radix)
                    if (j * group + d < count)
                        idx += expected[(o * count + j * group + d) * inner + i] * scale;
                for (unsigned k = 0; k < w; ++k) {
                    // bit k of group j is bit (j*W + k) % word_bits of word floor(... / word_bits)
                    const uint64_t pos = j * w + k;
                    if ((idx >> k) & 1)
                        packed[(o * words + pos / word_bits) * inner + i] |= 1u
                                                                             << (pos % word_bits);
                }
            }
    rt::Shape in_shape = c.out_shape;
    in_shape[axis] = int64_t(words);
    rt::Tensor x;
    if (c.u32) {
        x = tensor(DataType::uint32, in_shape, packed);
    } else {
        std::vector<uint8_t> b(packed.begin(), packed.end());
        x = tensor(DataType::uint8, in_shape, b);
    }
    std::vector<onnx::AttributeProto> attrs = {attr_int("axis", c.axis)};
    if (c.bits)
        attrs.push_back(attr_int("bits", c.bits));
    else
        attrs.push_back(attr_int("radix", c.radix)),
            attrs.push_back(attr_int("group_size", c.group));
    ModelBuilder b;
    b.input("X").input("count").output("Y");
    onnx::NodeProto &n = b.node("Unpack", {"X", "count"}, {"Y"}, {}, kNode);
    for (const auto &a : attrs) *n.add_attribute() = a;
    const rt::Tensor y = run1(b, {{"X", x}, {"count", scalar_i64(int64_t(count))}});
    EXPECT_EQ(y.shape(), c.out_shape);
    EXPECT_EQ(y.to_vector<uint8_t>(), expected);
}

TEST(Unpack, BitsEveryWidthStorageAndAxis) {
    uint64_t seed = 1;
    for (int bits = 1; bits <= 8; ++bits)
        for (const bool u32 : {false, true}) {
            check_round_trip({{37}, 0, u32, bits, 0, 0}, seed++);
            check_round_trip({{3, 45}, -1, u32, bits, 0, 0}, seed++);
            check_round_trip({{45, 3}, 0, u32, bits, 0, 0}, seed++);
            check_round_trip({{2, 29, 5}, 1, u32, bits, 0, 0}, seed++);
            check_round_trip({{2, 29, 5}, -2, u32, bits, 0, 0}, seed++);
        }
}

TEST(Unpack, GroupedSpellings) {
    uint64_t seed = 100;
    const std::pair<int, int> spellings[] = {{3, 5},   {3, 1},   {5, 3},  {7, 2},  {10, 3},
                                             {255, 2}, {256, 7}, {3, 39}, {2, 62}, {6, 24}};
    for (const auto &[r, g] : spellings)
        for (const bool u32 : {false, true}) {
            check_round_trip({{41}, 0, u32, 0, r, g}, seed++);
            check_round_trip({{4, 23}, 1, u32, 0, r, g}, seed++);
            check_round_trip({{23, 3}, 0, u32, 0, r, g}, seed++);
            check_round_trip({{2, 11, 70}, -2, u32, 0, r, g}, seed++);
        }
}

TEST(Unpack, LargeRowsUseThreads) {
    check_round_trip({{3, 300000}, -1, false, 3, 0, 0}, 7);
    check_round_trip({{1, 400000}, -1, false, 0, 3, 5}, 8);
    check_round_trip({{1000, 300}, 0, true, 5, 0, 0}, 9);
}

TEST(Unpack, ErrorsNameTheNode) {
    const rt::Tensor x = bytes_u8({255});
    const auto expect_error = [&](std::initializer_list<onnx::AttributeProto> attrs,
                                  const rt::Tensor &in, const rt::Tensor &count,
                                  const std::string &fragment) {
        const std::string e = unpack_error(attrs, in, count);
        EXPECT_NE(e.find(std::string("node \"") + kNode + "\" (Unpack-29)"), std::string::npos)
            << e;
        EXPECT_NE(e.find(fragment), std::string::npos) << e;
    };
    const rt::Tensor two = scalar_i64(2);
    expect_error({attr_int("bits", 3), attr_int("radix", 3)}, x, two, "mutually exclusive");
    expect_error({attr_int("bits", 3), attr_int("group_size", 1)}, x, two, "mutually exclusive");
    expect_error({attr_int("bits", 0)}, x, two, "outside [1, 8]");
    expect_error({attr_int("bits", 9)}, x, two, "outside [1, 8]");
    expect_error({attr_int("radix", 1), attr_int("group_size", 5)}, x, two, "outside [2, 256]");
    expect_error({attr_int("radix", 257), attr_int("group_size", 1)}, x, two, "outside [2, 256]");
    expect_error({attr_int("radix", 3), attr_int("group_size", 0)}, x, two, "not positive");
    expect_error({attr_int("radix", 3), attr_int("group_size", 40)}, x, two, "exceeds 2^63 - 1");
    expect_error({attr_int("radix", 2), attr_int("group_size", 63)}, x, two, "exceeds 2^63 - 1");
    expect_error({attr_int("radix", 256), attr_int("group_size", 8)}, x, two, "exceeds 2^63 - 1");
    expect_error({attr_int("radix", 3)}, x, two, "requires attribute 'group_size'");
    expect_error({attr_int("group_size", 3)}, x, two, "requires attribute 'radix'");
    expect_error({}, x, two, "needs attribute 'bits'");
    // Input axis size: 3 bits x 3 codes need 2 bytes; 1 and 3 are wrong.
    expect_error({attr_int("bits", 3)}, x, scalar_i64(3), "needs ceil(3 * 3 / 8) = 2");
    expect_error({attr_int("bits", 3)}, bytes_u8({1, 2, 3}), scalar_i64(3), "has 3 words");
    expect_error({attr_int("radix", 3), attr_int("group_size", 5)}, bytes_u8({1, 2}), scalar_i64(5),
                 "needs ceil(ceil(5 / 5) * 8 / 8) = 1");
    // Group index 243 is not below 3^5.
    expect_error({attr_int("radix", 3), attr_int("group_size", 5)}, bytes_u8({243}), scalar_i64(5),
                 "index 243 is not below radix^group_size = 243");
    // count: negative, not a scalar, not int64.
    expect_error({attr_int("bits", 3)}, x, scalar_i64(-1), "negative");
    expect_error({attr_int("bits", 3)}, x, tensor(DataType::int64, {1}, std::vector<int64_t>{2}),
                 "must be a scalar");
    expect_error({attr_int("bits", 3)}, x, tensor(DataType::int32, {}, std::vector<int32_t>{2}),
                 "must be int64");
    // Storage type and rank, axis range, attribute type.
    expect_error({attr_int("bits", 3)}, tensor(DataType::int8, {1}, std::vector<int8_t>{1}), two,
                 "must be uint8 or uint32");
    expect_error({attr_int("bits", 3)}, tensor(DataType::uint8, {}, std::vector<uint8_t>{1}), two,
                 "rank at least 1");
    expect_error({attr_int("bits", 3), attr_int("axis", 1)}, x, two, "out of range");
    expect_error({attr_int("bits", 3), attr_int("axis", -2)}, x, two, "out of range");
    expect_error({attr_ints("bits", {3})}, x, two, "must be of type INT");
}

TEST(Unpack, UnknownAttributeIsRejectedAtLoad) {
    ModelBuilder b = unpack_model({attr_int("bits", 3), attr_int("bitz", 3)});
    try {
        b.model();
        FAIL() << "expected an error";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("unknown attribute 'bitz'"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find(kNode), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace gguftool::rttest
