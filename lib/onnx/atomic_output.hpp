// Internal to lib/onnx: output files that appear whole or not at all.
//
// An OutputFile is written under a temporary name in its destination directory and renamed into
// place by commit(). Until keep() it is pending: its destructor removes it (the temporary file,
// or after commit() the renamed one), and so does a SIGINT, SIGTERM or SIGHUP arriving
// meanwhile, whose handler removes every pending file before letting the signal take its
// previous course. While any file is pending SIGXFSZ is ignored, so that exceeding a file size
// limit is a write error (cleaned up) rather than a kill.
#pragma once

#include <cstdint>
#include <string>

namespace gguftool::onnx_export::detail {

class OutputFile {
public:
    // Creates the temporary file. Throws gguftool::Error naming `final_path`.
    explicit OutputFile(std::string final_path);
    ~OutputFile();
    OutputFile(const OutputFile &) = delete;
    OutputFile &operator=(const OutputFile &) = delete;

    // Appends bytes. Throws gguftool::Error(final path, offset, reason).
    void write(const void *data, size_t size);
    // Appends zeros up to the next multiple of `alignment`.
    void pad_to(uint64_t alignment);
    uint64_t size() const { return size_; }
    const std::string &final_path() const { return final_; }

    // Closes the file (with the permissions a new file gets under the umask) and renames it to
    // its final path. It stays pending until keep().
    void commit();
    void keep();

private:
    std::string final_;
    std::string temp_;
    int fd_ = -1;
    int slot_ = -1;  // in the signal handler's table of pending paths
    uint64_t size_ = 0;
};

}  // namespace gguftool::onnx_export::detail
