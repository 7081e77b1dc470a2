// register_schemas(): opset 29 for the default domain, then DequantizePacked-29 and Unpack-29.
#include <mutex>

#include "gguftool/onnx_schemas.hpp"
#include "schemas.hpp"

namespace gguftool::opset29 {

void register_schemas() {
    static std::once_flag once;
    std::call_once(once, [] {
        detail::extend_default_domain(kOpsetVersion);
        // RegisterSchema reports a failure on stderr only; check that both arrived.
        onnx::RegisterSchema(detail::dequantize_packed_schema());
        onnx::RegisterSchema(detail::unpack_schema());
        for (const char *op : {"DequantizePacked", "Unpack"}) {
            const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(op, kOpsetVersion, "");
            if (!s || s->SinceVersion() != kOpsetVersion)
                throw Error("onnx", std::nullopt,
                            std::string("ONNX did not accept the schema of ") + op + "-29");
        }
    });
}

}  // namespace gguftool::opset29
