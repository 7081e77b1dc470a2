// .npy and .pb tensor files: round trips of every type, headers as NumPy writes them, errors.
#include "runtime_test_util.hpp"

namespace gguftool::rttest {
namespace {

const DataType kAllTypes[] = {
    DataType::float32, DataType::float16, DataType::bfloat16, DataType::float64, DataType::uint8,
    DataType::int8,    DataType::uint16,  DataType::int16,    DataType::uint32,  DataType::int32,
    DataType::uint64,  DataType::int64,   DataType::bool_};

rt::Tensor pattern(DataType t, rt::Shape shape) {
    rt::Tensor x = rt::Tensor::allocate(t, std::move(shape));
    for (size_t i = 0; i < x.nbytes(); ++i) x.mutable_data()[i] = uint8_t(i * 37 + 11);
    if (t == DataType::bool_)
        for (size_t i = 0; i < x.nbytes(); ++i) x.mutable_data()[i] &= 1;
    return x;
}

TEST(Npy, RoundTripEveryType) {
    TempDir tmp;
    for (const DataType t : kAllTypes)
        for (const rt::Shape &shape :
             {rt::Shape{}, rt::Shape{0}, rt::Shape{7}, rt::Shape{2, 3, 5}, rt::Shape{4, 0, 2}}) {
            SCOPED_TRACE(fmt::format("{} {}", dtype_name(t), rt::shape_string(shape)));
            const rt::Tensor x = pattern(t, shape);
            const std::string path = tmp.file("x.npy");
            rt::write_npy(path, x);
            const std::string bytes = read_text(path);
            ASSERT_GE(bytes.size(), 64u);
            // NumPy 1.0 header, data aligned to 64 bytes.
            EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
            const size_t header = size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8;
            EXPECT_EQ((10 + header) % 64, 0u);
            EXPECT_EQ(bytes[10 + header - 1], '\n');
            const rt::Tensor y = rt::read_npy(path);
            EXPECT_EQ(y.dtype(), t);
            EXPECT_EQ(y.shape(), shape);
            EXPECT_TRUE(rt::allclose(y, x, true).equal);
            EXPECT_EQ(rt::read_tensor_file(path).dtype(), t);
            // Through a serialized TensorProto too.
            onnx::TensorProto p;
            rt::tensor_to_proto(x, "x", p);
            write_file(tmp.file("x.pb"), p.SerializeAsString());
            EXPECT_TRUE(rt::allclose(rt::read_tensor_file(tmp.file("x.pb")), x, true).equal);
        }
}

TEST(Npy, HeaderSpellings) {
    const std::string dict_f2 = "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }";
    const std::string dict_bf = "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }";
    const auto file = [](const std::string &dict, const std::string &data, char major = 1) {
        std::string h = dict;
        const size_t prefix = major == 1 ? 10 : 12;
        while ((prefix + h.size() + 1) % 64) h += ' ';
        h += '\n';
        std::string out = std::string("\x93NUMPY", 6) + char(major) + '\0';
        out += char(h.size() & 0xff);
        out += char(h.size() >> 8);
        if (major != 1) out += std::string(2, '\0');
        return out + h + data;
    };
    const auto decode = [](const std::string &bytes) {
        return rt::decode_npy({reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()},
                              "t.npy");
    };
    // float16 is '<f2': 1.0, -2.0, 65504.
    const std::string halves("\x00\x3c\x00\xc0\xff\x7b", 6);
    rt::Tensor h = decode(file(dict_f2, halves));
    EXPECT_EQ(h.dtype(), DataType::float16);
    EXPECT_EQ(h.to_vector<uint16_t>(), (std::vector<uint16_t>{0x3c00, 0xc000, 0x7bff}));
    // Version 2.0 and double quotes.
    EXPECT_EQ(
        decode(file("{\"descr\": \"<f2\", \"fortran_order\": False, \"shape\": (3,)}", halves, 2))
            .dtype(),
        DataType::float16);
    // Big-endian input is swapped.
    h = decode(file("{'descr': '>f2', 'fortran_order': False, 'shape': (3,), }",
                    std::string("\x3c\x00\xc0\x00\x7b\xff", 6)));
    EXPECT_EQ(h.to_vector<uint16_t>(), (std::vector<uint16_t>{0x3c00, 0xc000, 0x7bff}));
    // bfloat16: '<u2' with gguftool's note reads as bfloat16, without it as uint16.
    const std::string words("\x80\x3f\x00\xc0", 4);
    EXPECT_EQ(
        decode(file(dict_bf + " # gguftool: bfloat16 stored as raw uint16 words", words)).dtype(),
        DataType::bfloat16);
    EXPECT_EQ(decode(file(dict_bf, words)).dtype(), DataType::uint16);
    // Fortran order is fine for vectors, refused for matrices.
    EXPECT_EQ(
        decode(file("{'descr': '<f2', 'fortran_order': True, 'shape': (3,), }", halves)).elements(),
        3u);
    EXPECT_THROW(decode(file("{'descr': '<f2', 'fortran_order': True, 'shape': (3, 1, 2), }",
                             halves + halves)),
                 Error);

    const auto error = [&](const std::string &bytes) {
        try {
            decode(bytes);
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(error("NUMPY").find("bad magic"), std::string::npos);
    EXPECT_NE(error(file(dict_f2, halves + "x")).find("data is 7 bytes"), std::string::npos);
    EXPECT_NE(error(file(dict_f2, halves.substr(1))).find("data is 5 bytes"), std::string::npos);
    EXPECT_NE(error(file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "12345678"))
                  .find("'<c8' is not supported"),
              std::string::npos);
    EXPECT_NE(
        error(file("{'descr': '<f2', 'fortran_order': False, 'shape': (99999999999999999,), }", ""))
            .find("too large"),
        std::string::npos);
    EXPECT_NE(error(file("{'descr': '<f2', 'fortran_order': False, 'shape': (-1,), }", ""))
                  .find("bad 'shape'"),
              std::string::npos);
    EXPECT_NE(error(file(dict_f2, halves).substr(0, 30)).find("truncated"), std::string::npos);
    // Every truncation is an error, never a crash.
    const std::string good = file(dict_f2, halves);
    for (size_t n = 0; n < good.size(); ++n) EXPECT_NE(error(good.substr(0, n)), "") << n;
}

TEST(Npy, UnsupportedTensorProtoTypes) {
    TempDir tmp;
    onnx::TensorProto p;
    p.set_data_type(8);  // string
    p.add_dims(1);
    p.add_string_data("hello");
    write_file(tmp.file("s.pb"), p.SerializeAsString());
    EXPECT_THROW(rt::read_tensor_file(tmp.file("s.pb")), Error);
    write_file(tmp.file("junk.pb"), "\xff\xff\xff\xff");
    EXPECT_THROW(rt::read_tensor_file(tmp.file("junk.pb")), Error);
}

}  // namespace
}  // namespace gguftool::rttest
