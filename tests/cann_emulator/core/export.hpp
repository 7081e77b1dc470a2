// Symbol visibility in the CANN emulation. Everything is compiled with -fvisibility=hidden and
// linked with a version script: the public libraries export only their part of the CANN ABI, and
// the core library exports the C++ interface those libraries share (namespace
// gguftool::cann_emulator), marked with GGUFTOOL_EMU_EXPORT.
#pragma once

#define GGUFTOOL_EMU_EXPORT __attribute__((visibility("default")))
