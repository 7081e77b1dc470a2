// Each subcommand registers itself on the CLI11 app and returns the function that runs it.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace gguftool::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // invalid input file (or, for verify, a mismatch)
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNoHelper = 127;  // gguftool-onnx is missing (as a shell's "not found")
// hash has llama-gguf-hash's exit codes, where 2 is a mismatch: its usage errors exit 1, as
// llama-gguf-hash's do.
inline constexpr int kHashExitUsage = 1;

using Runner = std::function<int()>;

Runner add_dump(CLI::App &app);
Runner add_diff(CLI::App &app);
Runner add_run(CLI::App &app);
Runner add_to_onnx(CLI::App &app);
Runner add_verify(CLI::App &app);
Runner add_lower(CLI::App &app);
Runner add_split(CLI::App &app);
Runner add_merge(CLI::App &app);
Runner add_edit(CLI::App &app);
Runner add_convert_endian(CLI::App &app);
Runner add_hash(CLI::App &app);
Runner add_tokenizer(CLI::App &app);
Runner add_generate(CLI::App &app);

// The subcommands whose code links ONNX and protobuf. `gguftool` lists them in --help but hands
// them to `gguftool-onnx`, the same CLI with every subcommand (onnx_helper.cpp), so that `dump`
// does not pay for loading those libraries.
struct HelperCommand {
    const char *name;
    const char *summary;  // as --help lists it
};
inline constexpr HelperCommand kRunCommand{"run",
                                           "Execute an ONNX model's graph, or run ONNX node tests"};
inline constexpr HelperCommand kToOnnxCommand{
    "to-onnx", "Convert a GGUF model to an ONNX model (opset 29, or lowered)"};
inline constexpr HelperCommand kVerifyCommand{
    "verify", "Compare gguftool's decoding of every tensor with llama.cpp's, bit for bit"};
inline constexpr HelperCommand kLowerCommand{
    "lower", "Rewrite DequantizePacked and Unpack as standard operators (opset 17-26)"};
inline constexpr HelperCommand kGenerateCommand{
    "generate", "Generate text with a decoder package (to-onnx --graph decoder)"};
inline constexpr HelperCommand kHelperCommands[] = {kRunCommand, kToOnnxCommand, kLowerCommand,
                                                    kVerifyCommand, kGenerateCommand};

// The entry of kHelperCommands that the command line names, or nullptr. The first argument that is
// not an option names the subcommand: gguftool's own options (--help, --version) take no value.
const HelperCommand *helper_command(int argc, char **argv);

// Replaces this process with gguftool-onnx, given the same arguments. Returns (kExitNoHelper)
// only if it cannot, after saying why.
int exec_helper(const HelperCommand &command, char **argv);

}  // namespace gguftool::cli
