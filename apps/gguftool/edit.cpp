// gguftool edit: metadata set, added or deleted; the tensor data copied unchanged (or, with
// --in-place, left where it is).
#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "edit_plan.hpp"
#include "gguftool/gguf_model_writer.hpp"
#include "header_in_place.hpp"
#include "output.hpp"
#include "value_display.hpp"

namespace gguftool::cli {
namespace edit {
namespace {

struct Options {
    std::string in, out;
    bool in_place = false;
    bool dry_run = false;
    std::vector<Edit> edits;
};

bool same_value(const gguf::MetaValue &a, const gguf::MetaValue &b) {
    if (a.type() != b.type() || a.bits() != b.bits() || a.string() != b.string() ||
        a.element_type() != b.element_type() || a.elements().size() != b.elements().size())
        return false;
    for (size_t i = 0; i < a.elements().size(); ++i)
        if (!same_value(a.elements()[i], b.elements()[i])) return false;
    return true;
}

template <class V>
void put_typed(Out &out, const V &v) {
    out.print("{} ", type_label(v));
    put_value(out, v);
}

// One line per change: "key: old -> new", "key: added new", "key: deleted (was old)".
void put_changes(Out &out, const Plan &p) {
    for (const Change &c : p.changes) {
        put_display_string(out, c.key, SIZE_MAX);
        out.put(": ");
        if (c.old && c.now && same_value(gguf::MetaValue::from_value(*c.old), *c.now)) {
            out.put("unchanged (");
            put_typed(out, *c.old);
            out.put(')');
        } else if (c.old && c.now) {
            put_typed(out, *c.old);
            out.put(" -> ");
            put_typed(out, MetaView(*c.now));
        } else if (c.now) {
            out.put("added ");
            put_typed(out, MetaView(*c.now));
        } else {
            out.put("deleted (was ");
            put_typed(out, *c.old);
            out.put(')');
        }
        out.put('\n');
    }
    if (p.header.alignment != p.old_alignment)
        out.print("data section realigned from {} to {} bytes\n", p.old_alignment,
                  p.header.alignment);
}

// Why the new header cannot replace the old one in place, or "" when it can.
std::string in_place_problem(const gguf::File &f, const Plan &p) {
    if (gguf::header_size(p.header) != f.data_offset()) {
        // Readers find the data at the header's end rounded up to the alignment: in place, the
        // header may only grow into its padding or shrink by less than the alignment.
        gguf::Header unpadded = p.header;
        unpadded.alignment = 1;
        const uint64_t a = p.header.alignment, end = f.data_offset();
        return fmt::format(
            "the new header is {} bytes before its padding, and to end where the "
            "data section starts (offset {}, alignment {}) it must be {} to {} "
            "bytes",
            gguf::header_size(unpadded), end, a, end > a ? end - a + 1 : 0, end);
    }
    for (const gguf::TensorHeader &t : p.header.tensors)
        if (t.offset % p.header.alignment != 0)
            return fmt::format(
                "tensor {} (data offset {}) is not aligned to {}: the data must "
                "be realigned",
                t.name, t.offset, p.header.alignment);
    return "";
}

int run(const Options &opt) {
    if (const std::string problem = command_line_problem(opt.edits); !problem.empty()) {
        fmt::print(stderr, "gguftool edit: {}\nRun with --help for more information.\n", problem);
        return kExitUsage;
    }
    if (opt.out.empty() && !opt.in_place) {
        fmt::print(stderr,
                   "gguftool edit: give -o OUT or --in-place\n"
                   "Run with --help for more information.\n");
        return kExitUsage;
    }
    const auto file = gguf::File::open(opt.in);
    Plan p = plan(*file, opt.edits);
    Out out(stdout);
    std::string result;
    if (opt.in_place) {
        if (const std::string problem = in_place_problem(*file, p); !problem.empty())
            throw Error(
                opt.in, std::nullopt,
                fmt::format("--in-place: {}; nothing written (write a new file with -o)", problem));
        const uint64_t size = gguf::header_size(p.header);
        if (opt.dry_run) {
            result = fmt::format("dry run: would rewrite the header of {} in place ({} bytes)",
                                 opt.in, size);
        } else {
            overwrite_header(*file, gguf::encode_header(p.header));
            result = fmt::format("rewrote the header of {} in place ({} bytes)", opt.in, size);
        }
    } else {
        std::vector<gguf::TensorData> data;
        for (const gguf::TensorInfo &t : file->tensors())
            data.push_back(gguf::TensorData::copy(*file, t));
        if (opt.dry_run) {
            result = fmt::format("dry run: would write {} ({} bytes)", opt.out,
                                 gguf::planned_size(p.header, data));
        } else {
            OutputFile output(opt.out);
            const uint64_t size = gguf::write_model(output, p.header, data);
            output.commit();
            output.keep();
            result = fmt::format("wrote {} ({} bytes)", opt.out, size);
        }
    }
    put_changes(out, p);
    out.print("{}\n", result);
    if (!out.flush()) {
        std::perror("gguftool: writing output");
        return kExitInvalid;
    }
    return kExitOk;
}

}  // namespace
}  // namespace edit

Runner add_edit(CLI::App &app) {
    using edit::Edit;
    auto opt = std::make_shared<edit::Options>();
    auto *cmd = app.add_subcommand(
        "edit", "Set, add or delete metadata; the tensor data is copied unchanged");
    cmd->add_option("IN", opt->in, "GGUF file to edit (one file; a shard of a split model too)")
        ->required();
    auto *out = cmd->add_option("-o,--output", opt->out,
                                "Write the edited file to OUT (under a temporary name, renamed "
                                "into place when complete; OUT may be IN)")
                    ->type_name("OUT");
    auto *in_place = cmd->add_flag("--in-place", opt->in_place,
                                   "Rewrite IN's header where it is, leaving the data in place; "
                                   "only when the new header fits before the data section");
    out->excludes(in_place);
    // Each edit option appends to one list as it is parsed, so edits keep the command line's
    // order (new keys are added in that order).
    const auto edit_option = [&](const char *name, Edit::Kind kind, const char *form,
                                 const char *help) {
        cmd->add_option_function<std::string>(
               name,
               [opt, kind](const std::string &arg) {
                   opt->edits.push_back({kind, arg});
               },
               help)
            ->type_name(form)
            ->trigger_on_parse()
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
            ->check(CLI::Validator(
                [kind](std::string &arg) { return edit::argument_problem(kind, arg); }, "",
                "Edit"));
    };
    edit_option("--set", Edit::Kind::set, "KEY=TYPE:VALUE",
                "Set KEY to a scalar of TYPE (uint8 ... int64, float32, float64, bool, string)");
    edit_option("--set-json", Edit::Kind::set_json, "KEY=TYPE:JSON",
                "Set KEY to a JSON value or array (nested too) of TYPE elements");
    edit_option("--set-file", Edit::Kind::set_file, "KEY=PATH",
                "Set KEY to a string holding the bytes of the file PATH (a chat template)");
    edit_option("--delete", Edit::Kind::remove, "KEY", "Delete KEY (it must exist)");
    cmd->add_flag("--dry-run", opt->dry_run, "Print what would change; write nothing");
    return [opt] { return edit::run(*opt); };
}

}  // namespace gguftool::cli
