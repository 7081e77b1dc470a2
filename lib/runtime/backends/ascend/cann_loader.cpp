// Finding and loading CANN's libraries with dlopen, and resolving every symbol the backend uses.
#include "cann_loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include "gguftool/error.hpp"

namespace gguftool::runtime::ascend {
namespace {

namespace fs = std::filesystem;

// A directory to search ("" is the system path: dlopen by bare name) and how it was chosen.
struct SearchDir {
    std::string dir;
    std::string origin;  // "$GGUFTOOL_CANN_LIB_DIR", "system library path"
};

std::string machine() {
    utsname u{};
    return uname(&u) == 0 ? u.machine : "x86_64";
}

std::optional<std::string> env(const char *name) {
    const char *v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

// Where CANN's libraries are looked for, in order.
std::vector<SearchDir> cann_dirs(std::vector<std::string> &unset) {
    std::vector<SearchDir> dirs;
    if (auto d = env("GGUFTOOL_CANN_LIB_DIR"))
        dirs.push_back({*d, "$GGUFTOOL_CANN_LIB_DIR"});
    else
        unset.push_back("$GGUFTOOL_CANN_LIB_DIR");
    const std::string arch = machine();
    for (const char *var : {"ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"}) {
        const auto home = env(var);
        if (!home) {
            unset.push_back(fmt::format("${}", var));
            continue;
        }
        // lib64 (the toolkit's links), its runtime part, the per-architecture tree, and 8.1's
        // operator package where libopapi.so itself lives.
        for (const std::string &sub :
             std::vector<std::string>{"lib64", "runtime/lib64", arch + "-linux/lib64",
                                      "opp/built-in/op_impl/ai_core/tbe/op_api/lib/linux/" + arch})
            dirs.push_back({(fs::path(*home) / sub).string(), fmt::format("${}", var)});
    }
    dirs.push_back({"", "the system library path"});
    return dirs;
}

struct Opened {
    void *handle = nullptr;
    std::string path;
};

// The first of `names` found in the first directory that has one, or nullopt; `tried` collects
// what was looked at (for the error).
std::optional<Opened> open_first(const std::vector<SearchDir> &dirs,
                                 std::initializer_list<const char *> names,
                                 std::vector<std::string> &tried) {
    for (const SearchDir &d : dirs) {
        for (const char *name : names) {
            const std::string path = d.dir.empty() ? name : (fs::path(d.dir) / name).string();
            if (!d.dir.empty() && !fs::exists(path)) continue;
            if (void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return Opened{h, path};
            if (d.dir.empty()) continue;  // not on the system path
            tried.push_back(fmt::format("{} ({})", path, dlerror()));
        }
    }
    return std::nullopt;
}

std::string where_searched(const std::vector<SearchDir> &dirs,
                           const std::vector<std::string> &unset) {
    std::vector<std::string> parts;
    for (const SearchDir &d : dirs)
        parts.push_back(d.dir.empty() ? d.origin : fmt::format("{} ({})", d.dir, d.origin));
    std::string s = fmt::format("searched {}", fmt::join(parts, ", "));
    if (!unset.empty()) s += fmt::format("; unset: {}", fmt::join(unset, ", "));
    return s;
}

template <class F>
void resolve(void *handle, const std::string &file, const char *symbol, F *&out) {
    out = reinterpret_cast<F *>(dlsym(handle, symbol));
    if (!out)
        throw Error(file, std::nullopt,
                    fmt::format("CANN library lacks {}, which the ascend backend needs", symbol));
}

void *find_in(const std::vector<Opened> &libs, const char *symbol) {
    for (const Opened &l : libs)
        if (void *p = dlsym(l.handle, symbol)) return p;
    return nullptr;
}

Cann load() {
    Cann c;
    std::vector<std::string> unset;
    const std::vector<SearchDir> dirs = cann_dirs(unset);
    std::vector<std::string> tried;

    const auto runtime = open_first(dirs, {"libacl_rt.so", "libascendcl.so"}, tried);
    if (!runtime)
        throw Error(fmt::format(
            "the ascend backend needs CANN (the Ascend NPU runtime): libacl_rt.so (CANN 8.5+) or "
            "libascendcl.so (CANN 8.1) was not found; {}{}. Set GGUFTOOL_CANN_LIB_DIR or source "
            "CANN's set_env.sh",
            where_searched(dirs, unset),
            tried.empty() ? "" : fmt::format("; could not load {}", fmt::join(tried, ", "))));
    const bool v85 = runtime->path.ends_with("libacl_rt.so");
    // The other libraries come from the directory the runtime was found in when it has them.
    std::vector<SearchDir> near = dirs;
    if (const std::string beside = fs::path(runtime->path).parent_path().string(); !beside.empty())
        near.insert(near.begin(), {beside, "beside it"});

    const auto nnopbase = open_first(near, {"libnnopbase.so"}, tried);
    if (!nnopbase)
        throw Error(fmt::format("the ascend backend found {} but not libnnopbase.so; {}",
                                runtime->path, where_searched(near, unset)));
    std::vector<Opened> opapi;
    // CANN 8.5+ splits the operators by repository; the aggregate libopapi.so must not be mixed
    // with those (ops-math's op_api_list.md).
    if (auto math = open_first(near, {"libopapi_math.so"}, tried)) {
        opapi.push_back(*math);
        if (auto nn = open_first(near, {"libopapi_nn.so"}, tried)) opapi.push_back(*nn);
    } else if (auto all = open_first(near, {"libopapi.so"}, tried)) {
        opapi.push_back(*all);
    } else {
        throw Error(
            fmt::format("the ascend backend found {} but no operator library (libopapi_math.so and "
                        "libopapi_nn.so, or libopapi.so); {}",
                        runtime->path, where_searched(near, unset)));
    }
    c.layout = v85 ? "CANN 8.5+ layout" : "CANN 8.1 layout";
    c.files = {runtime->path, nnopbase->path};
    for (const Opened &o : opapi) c.files.push_back(o.path);

#define GGUFTOOL_CANN_RESOLVE_RUNTIME(name, ret, params) \
    resolve(runtime->handle, runtime->path, #name, c.name);
    GGUFTOOL_CANN_RUNTIME_FUNCTIONS(GGUFTOOL_CANN_RESOLVE_RUNTIME)
#undef GGUFTOOL_CANN_RESOLVE_RUNTIME
#define GGUFTOOL_CANN_RESOLVE_NNOPBASE(name, ret, params) \
    resolve(nnopbase->handle, nnopbase->path, #name, c.name);
    GGUFTOOL_CANN_NNOPBASE_FUNCTIONS(GGUFTOOL_CANN_RESOLVE_NNOPBASE)
#undef GGUFTOOL_CANN_RESOLVE_NNOPBASE
    // An operator counts only when both of its phases resolve (as torch_npu's op-plugin checks).
#define GGUFTOOL_CANN_RESOLVE_OPERATOR(name, library, params)                    \
    {                                                                            \
        void *ws = find_in(opapi, "aclnn" #name "GetWorkspaceSize");             \
        void *run = find_in(opapi, "aclnn" #name);                               \
        if (ws && run) {                                                         \
            c.aclnn##name##GetWorkspaceSize =                                    \
                reinterpret_cast<cann::fn::aclnn##name##GetWorkspaceSize *>(ws); \
            c.aclnn##name = reinterpret_cast<cann::fn::aclnnLaunch *>(run);      \
        } else {                                                                 \
            c.missing.push_back("aclnn" #name);                                  \
        }                                                                        \
    }
    GGUFTOOL_CANN_ACLNN_OPERATORS(GGUFTOOL_CANN_RESOLVE_OPERATOR)
#undef GGUFTOOL_CANN_RESOLVE_OPERATOR

    if (auto *describe = reinterpret_cast<cann::EmulatorDescriptionFn *>(
            dlsym(runtime->handle, cann::kEmulatorMarkerSymbol)))
        c.emulation = describe();

    // ATB (optional): OneHot uses aclnnOneHot without it.
    std::vector<SearchDir> atb_dirs;
    if (auto home = env("ATB_HOME_PATH"))
        atb_dirs.push_back({(fs::path(*home) / "lib").string(), "$ATB_HOME_PATH"});
    if (auto d = env("GGUFTOOL_CANN_LIB_DIR")) atb_dirs.push_back({*d, "$GGUFTOOL_CANN_LIB_DIR"});
    atb_dirs.push_back({"", "the system library path"});
    std::vector<std::string> atb_tried;
    if (auto atb = open_first(atb_dirs, {"libatb.so"}, atb_tried)) {
        bool all = true;
#define GGUFTOOL_CANN_RESOLVE_ATB(name, symbol, ret, params)                           \
    c.atb##name = reinterpret_cast<cann::fn::atb##name *>(dlsym(atb->handle, symbol)); \
    all = all && c.atb##name;
        GGUFTOOL_CANN_ATB_FUNCTIONS(GGUFTOOL_CANN_RESOLVE_ATB)
#undef GGUFTOOL_CANN_RESOLVE_ATB
        c.has_atb = all;
        if (all) c.files.push_back(atb->path);
    }
    // The libraries stay loaded for the life of the process: CANN is initialised once.
    return c;
}

}  // namespace

const Cann &load_cann() {
    static std::once_flag once;
    static std::optional<Cann> cann;
    static std::string failure;
    std::call_once(once, [] {
        try {
            cann = load();
        } catch (const Error &e) {
            failure = e.what();
        }
    });
    if (!cann) throw Error(failure);
    return *cann;
}

}  // namespace gguftool::runtime::ascend
