// Output files that appear whole or not at all.
//
// An OutputFile is written under a temporary name in its destination directory and renamed into
// place by commit(), so an earlier file of the same name stays until the new one is complete.
// Until keep() it is pending: its destructor removes it (the temporary file, or after commit()
// the renamed one), so an exception, a failed write (full disk, file size limit) or an early
// return leaves nothing behind.
//
// The library installs no signal handler. A program that wants an interrupt to leave nothing
// either installs its own for the signals it cares about, calling remove_pending_outputs() and
// then ending with the signal (apps/gguftool/signals.cpp does this for SIGINT, SIGTERM and
// SIGHUP), or leaves them alone: then a signal may leave a temporary file (a dot file named
// after the output), never a partial output under the real name. A program should also ignore
// SIGXFSZ, so that exceeding a file size limit is a write error rather than a kill.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gguftool {

namespace detail {
struct PendingSlot;
}

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
    // Appends `size` bytes of the file open as `source_fd` from offset `source_offset`, named
    // `source` in errors. In the kernel with copy_file_range; where it cannot (another file
    // system, no support: EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, ...) with pread and write through a
    // fixed 1 MiB buffer. Throws gguftool::Error(final path, offset, reason naming the source and
    // its offset), also when the source ends before `size` bytes.
    void copy_from(int source_fd, uint64_t source_offset, uint64_t size, const std::string &source);
    uint64_t size() const { return size_; }
    const std::string &final_path() const { return final_; }

    // Closes the file (with the permissions a new file gets under the umask); it stays pending,
    // under its temporary name, and takes no write any more. For a program that writes many
    // outputs before committing any (a split model's shards): each holds a descriptor until then.
    void close();
    // Closes the file if it is open and renames it to its final path. It stays pending until
    // keep(). With Existing::refuse, an existing file of that name is an error, not replaced
    // (checked atomically by the rename: RENAME_NOREPLACE, or link where that is unsupported).
    enum class Existing { replace, refuse };
    void commit(Existing existing = Existing::replace);
    // The output is done: the destructor and remove_pending_outputs() leave it alone.
    void keep();

private:
    std::string final_;
    std::string temp_;
    int fd_ = -1;
    // In the table of pending paths remove_pending_outputs() reads (null: not registered).
    detail::PendingSlot *slot_ = nullptr;
    uint64_t size_ = 0;
};

// Throws gguftool::Error naming `output` if it is the same file (device and inode) as one of
// `inputs`: an output renamed over its input would replace what it is made from.
void refuse_to_write_over(const std::string &output, const std::vector<std::string> &inputs);

// Removes every pending output file of the process (temporary, or committed but not kept).
// Async-signal-safe, and only for a signal handler that then ends the process: it waits for a
// thread that is just creating or renaming an output, and from then on a thread that creates or
// commits an output waits for the end of the process, so that no file appears after the removal.
void remove_pending_outputs() noexcept;

}  // namespace gguftool
