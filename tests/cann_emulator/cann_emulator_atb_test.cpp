// The emulation's ATB OnehotOperation through atb_abi's layouts: the variant-pack checks of Setup,
// what Execute needs, and np.eye(depth)[x] (the examples of ATB's OnehotOperation operator
// documentation).
#include <memory>

#include "emulator_session.hpp"

namespace gguftool::cann_emulator_test {
namespace {

using ::testing::HasSubstr;
namespace abi = cann::atb_abi;

abi::Tensor atb_tensor(void *data, cann::aclDataType dtype, std::vector<int64_t> dims) {
    abi::Tensor t;
    t.desc.dtype = dtype;
    t.desc.format = cann::ACL_FORMAT_ND;
    t.desc.shape.dimNum = dims.size();
    int64_t n = 1;
    for (size_t i = 0; i < dims.size(); ++i) n *= t.desc.shape.dims[i] = dims[i];
    t.deviceData = data;
    t.dataSize = uint64_t(n) * (dtype == cann::ACL_INT64 ? 8 : 4);
    return t;
}

// An ATB session: a context on the session's stream and a OnehotOperation.
struct Onehot {
    Onehot(Session &s, int64_t axis, int64_t depth) : s(s) {
        EXPECT_EQ(s.api.atbCreateContext(&context), 0);
        EXPECT_EQ(context->SetExecuteStream(s.stream), 0);
        abi::OnehotParam p;
        p.axis = axis;
        p.depth = depth;
        EXPECT_EQ(s.api.atbCreateOnehotOperation(p, &op), 0) << recent(s.api);
    }
    ~Onehot() {
        EXPECT_EQ(s.api.atbDestroyOperation(op), 0);
        EXPECT_EQ(s.api.atbDestroyContext(context), 0);
    }
    // x, one, zero -> y.
    void pack(abi::Tensor x, abi::Tensor one, abi::Tensor zero, abi::Tensor y) {
        vp->inTensors.size_ = 3;
        vp->inTensors.storage_[0] = x;
        vp->inTensors.storage_[1] = one;
        vp->inTensors.storage_[2] = zero;
        vp->outTensors.size_ = 1;
        vp->outTensors.storage_[0] = y;
    }
    abi::Status setup() { return op->Setup(*vp, workspace_size, context); }
    abi::Status execute() {
        void *ws = workspace_size ? s.malloc(workspace_size) : nullptr;
        return op->Execute(*vp, static_cast<uint8_t *>(ws), workspace_size, context);
    }

    Session &s;
    abi::Context *context = nullptr;
    abi::Operation *op = nullptr;
    std::unique_ptr<abi::VariantPack> vp = std::make_unique<abi::VariantPack>();  // 13.5 KB
    uint64_t workspace_size = 0;
};

TEST(CannEmulatorAtb, OnehotIsAnEyeRowPerIndexAtTheAxis) {
    in_child([] {
        Session s;
        // The spec's example 1: x [2, 3], depth 10, axis -1.
        void *x = s.upload(std::vector<int32_t>{4, 4, 6, 6, 7, 6});
        void *one = s.upload(std::vector<int32_t>{5}), *zero = s.upload(std::vector<int32_t>{9});
        void *y = s.malloc(4 * 60);
        {
            Onehot o(s, -1, 10);
            EXPECT_EQ(o.op->GetInputNum(), 3u);
            EXPECT_EQ(o.op->GetOutputNum(), 1u);
            o.pack(atb_tensor(x, cann::ACL_INT32, {2, 3}), atb_tensor(one, cann::ACL_INT32, {1}),
                   atb_tensor(zero, cann::ACL_INT32, {1}),
                   atb_tensor(y, cann::ACL_INT32, {2, 3, 10}));
            ASSERT_EQ(o.setup(), 0) << recent(s.api);
            EXPECT_GT(o.workspace_size, 0u);
            ASSERT_EQ(o.execute(), 0) << recent(s.api);
            const std::vector<int32_t> got = s.download<int32_t>(y, 60);
            const int hot[6] = {4, 4, 6, 6, 7, 6};  // 1 at the index, 0 elsewhere (not one/zero)
            for (int r = 0; r < 6; ++r)
                for (int k = 0; k < 10; ++k)
                    EXPECT_EQ(got[size_t(r * 10 + k)], k == hot[r] ? 1 : 0) << r << "," << k;
        }
        // Example 2: x [[2, 0, 4], [4, 3, 0]] (INT64), depth 5, axis 0: out [5, 2, 3].
        void *x2 = s.upload(std::vector<int64_t>{2, 0, 4, 4, 3, 0});
        void *one2 = s.upload(std::vector<int64_t>{1}), *zero2 = s.upload(std::vector<int64_t>{0});
        void *y2 = s.malloc(8 * 30);
        Onehot o(s, 0, 5);
        o.pack(atb_tensor(x2, cann::ACL_INT64, {2, 3}), atb_tensor(one2, cann::ACL_INT64, {1}),
               atb_tensor(zero2, cann::ACL_INT64, {1}), atb_tensor(y2, cann::ACL_INT64, {5, 2, 3}));
        ASSERT_EQ(o.setup(), 0) << recent(s.api);
        ASSERT_EQ(o.execute(), 0) << recent(s.api);
        EXPECT_EQ(s.download<int64_t>(y2, 30),
                  (std::vector<int64_t>{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0,
                                        0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0}));
    });
}

TEST(CannEmulatorAtb, SetupChecksTheVariantPack) {
    in_child([] {
        Session s;
        void *x = s.upload(std::vector<int32_t>{0, 1});
        void *ones = s.upload(std::vector<int32_t>{1, 1});
        void *y = s.malloc(4 * 6);
        const abi::Tensor tx = atb_tensor(x, cann::ACL_INT32, {2}),
                          ty = atb_tensor(y, cann::ACL_INT32, {2, 3});
        Onehot o(s, -1, 3);
        o.pack(tx, atb_tensor(ones, cann::ACL_INT32, {2}), atb_tensor(ones, cann::ACL_INT32, {1}),
               ty);
        EXPECT_NE(o.setup(), 0);
        EXPECT_THAT(recent(s.api), HasSubstr("one has shape [2]"));
        o.pack(tx, atb_tensor(ones, cann::ACL_INT32, {1}), atb_tensor(ones, cann::ACL_INT32, {2}),
               ty);
        EXPECT_NE(o.setup(), 0);
        EXPECT_THAT(recent(s.api), HasSubstr("zero has shape [2]"));
        o.pack(atb_tensor(x, cann::ACL_FLOAT, {2}), atb_tensor(ones, cann::ACL_FLOAT, {1}),
               atb_tensor(ones, cann::ACL_FLOAT, {1}), atb_tensor(y, cann::ACL_FLOAT, {2, 3}));
        EXPECT_NE(o.setup(), 0);
        EXPECT_THAT(recent(s.api), HasSubstr("INT32 or INT64"));
        o.pack(tx, atb_tensor(ones, cann::ACL_INT32, {1}), atb_tensor(ones, cann::ACL_INT32, {1}),
               atb_tensor(y, cann::ACL_INT32, {3, 2}));
        EXPECT_NE(o.setup(), 0);
        EXPECT_THAT(recent(s.api), HasSubstr("not [2, 3]"));
        // Execute needs a Setup of the same pack.
        EXPECT_NE(o.execute(), 0);
        o.pack(tx, atb_tensor(ones, cann::ACL_INT32, {1}), atb_tensor(ones, cann::ACL_INT32, {1}),
               ty);
        ASSERT_EQ(o.setup(), 0) << recent(s.api);
        o.vp->inTensors.storage_[1].deviceData = static_cast<char *>(ones) + 4;
        EXPECT_NE(o.execute(), 0);
        EXPECT_THAT(recent(s.api), HasSubstr("differs from the one Setup checked"));

        // The axis: -1 up to rank (here 1); CreateOperation refuses below -1.
        abi::OnehotParam p;
        p.axis = -2;
        p.depth = 3;
        abi::Operation *op = nullptr;
        EXPECT_NE(s.api.atbCreateOnehotOperation(p, &op), 0);
        Onehot far(s, 2, 3);
        far.pack(tx, atb_tensor(ones, cann::ACL_INT32, {1}), atb_tensor(ones, cann::ACL_INT32, {1}),
                 ty);
        EXPECT_NE(far.setup(), 0);
        EXPECT_THAT(recent(s.api), HasSubstr("axis 2"));
    });
}

TEST(CannEmulatorAtb, ExecuteNeedsStreamAndWorkspaceAndFailsOnIndicesPastDepth) {
    in_child([] {
        Session s;
        void *x = s.upload(std::vector<int32_t>{0, 3});  // 3 is not below depth 3
        void *one = s.upload(std::vector<int32_t>{1});
        void *y = s.malloc(4 * 6);
        Onehot o(s, -1, 3);
        o.pack(atb_tensor(x, cann::ACL_INT32, {2}), atb_tensor(one, cann::ACL_INT32, {1}),
               atb_tensor(one, cann::ACL_INT32, {1}), atb_tensor(y, cann::ACL_INT32, {2, 3}));
        ASSERT_EQ(o.setup(), 0) << recent(s.api);
        EXPECT_NE(o.op->Execute(*o.vp, nullptr, o.workspace_size, o.context), 0);
        EXPECT_THAT(recent(s.api), HasSubstr("workspace"));
        ASSERT_EQ(o.setup(), 0);
        ASSERT_EQ(o.context->SetExecuteStream(nullptr), 0);
        EXPECT_NE(o.execute(), 0);
        EXPECT_THAT(recent(s.api), HasSubstr("SetExecuteStream"));
        ASSERT_EQ(o.context->SetExecuteStream(s.stream), 0);
        EXPECT_EQ(o.context->GetExecuteStream(), s.stream);
        ASSERT_EQ(o.setup(), 0);
        ASSERT_EQ(o.execute(), 0) << recent(s.api);
        EXPECT_EQ(s.api.aclrtSynchronizeStream(s.stream), cann::kAclErrorRtAicoreException);
        EXPECT_THAT(recent(s.api), HasSubstr("atb::OnehotOperation"));
        EXPECT_THAT(recent(s.api), HasSubstr("outside [0, depth 3)"));
    });
}

}  // namespace
}  // namespace gguftool::cann_emulator_test
