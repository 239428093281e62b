// SPDX-License-Identifier: BSD-3-Clause
// Names and conventions of the OTF2 archives p3s writes; readers (the analyzer) use the same constants.
#pragma once

#include <string_view>

namespace p3s::trace {

/// The archive lives at `<dir>/<kArchiveName>.otf2` (+ `.def` and a `<kArchiveName>/` folder), as Score-P's does.
inline constexpr std::string_view kArchiveName = "traces";
/// Per-thread raw event logs written while the application runs, converted to OTF2 at MPI_Finalize.
inline constexpr std::string_view kRawDir = "p3s-raw";
/// Where the archive is assembled before it is moved into place; a reader never sees a half-written archive.
inline constexpr std::string_view kPartialDir = ".p3s-partial";

/// Archive properties (OTF2_Archive_SetProperty); every p3s archive states what it holds.
namespace property {
/// Tool and version that wrote the archive, e.g. "p3s 0.1.0".
inline constexpr const char* kTool = "P3S::TOOL";
/// Version of these conventions; bumped when a reader must change.
inline constexpr const char* kSchemaVersion = "P3S::SCHEMA_VERSION";
/// The work metric of the bursts: "PAPI_TOT_INS", "cputime_ns" or "none".
inline constexpr const char* kWorkMetric = "P3S::WORK_METRIC";
/// What the user asked for (auto, papi, cputime, none) and why the metric differs, if it does.
inline constexpr const char* kCountersRequested = "P3S::COUNTERS_REQUESTED";
inline constexpr const char* kCountersNote = "P3S::COUNTERS_NOTE";
/// How thread CPU time was read (the system-call window, whether context switches were followed).
inline constexpr const char* kCpuTimeRead = "P3S::CPU_TIME_READ";
/// "true" when every rank reached MPI_Finalize; "false" for an archive rebuilt by `p3s recover`.
inline constexpr const char* kComplete = "P3S::COMPLETE";
/// Ranks whose logs ended before MPI_Finalize, comma separated (only in recovered archives).
inline constexpr const char* kIncompleteRanks = "P3S::INCOMPLETE_RANKS";
/// Number of MPI processes (MPI_COMM_WORLD size).
inline constexpr const char* kProcesses = "P3S::PROCESSES";
/// The command that was traced and when (ISO 8601, UTC).
inline constexpr const char* kCommand = "P3S::COMMAND";
inline constexpr const char* kDate = "P3S::DATE";
/// MPI thread level provided: single, funneled, serialized or multiple.
inline constexpr const char* kThreadLevel = "P3S::THREAD_LEVEL";
/// The MPI library, the first line of MPI_Get_library_version ("Open MPI v4.1.4, ...", "MPICH Version: 4.0.2").
inline constexpr const char* kMpiLibrary = "P3S::MPI_LIBRARY";
}  // namespace property

/// 2: one Metric record per call, before its Enter, counting the thread's work outside MPI calls (1: the raw counters
/// before every Enter and Leave).
inline constexpr std::string_view kSchemaVersion = "2";
inline constexpr int kSchemaVersionNumber = 2;
static_assert(kSchemaVersion.size() == 1 && kSchemaVersion[0] - '0' == kSchemaVersionNumber);

/// Work metric names as they appear in metric member definitions and in P3S::WORK_METRIC.
namespace metric {
inline constexpr const char* kInstructions = "PAPI_TOT_INS";
inline constexpr const char* kCycles = "PAPI_TOT_CYC";
inline constexpr const char* kLastLevelMisses = "PAPI_L3_TCM";
inline constexpr const char* kCpuTime = "cputime_ns";
inline constexpr const char* kNone = "none";
}  // namespace metric

/// Attribute attached to the Enter record of an MPI call when call sites are recorded (type STRING):
/// "symbol+0xOFF [module+0xOFF]", where the module offset is stable across ranks and runs.
inline constexpr const char* kCallsiteAttribute = "P3S_CALLSITE";

}  // namespace p3s::trace
