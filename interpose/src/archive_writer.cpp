// SPDX-License-Identifier: BSD-3-Clause
// Opening an archive with bounded memory, and filling it in OTF2's order.
#include "p3s/interpose/archive_writer.hpp"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "p3s/trace/schema.hpp"

namespace p3s::interpose {
namespace {

/// OTF2 asks before flushing a full buffer; p3s always lets it flush. There is deliberately no post-flush
/// callback: with one, OTF2 inserts a BUFFER_FLUSH record into the events at every flush.
OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
constexpr OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, nullptr};

/// The chunks OTF2 allocated for one buffer.
struct ChunkPool {
  std::vector<void*> chunks;
};

void* allocate_chunk(void* user, OTF2_FileType type, OTF2_LocationRef, void** per_buffer, uint64_t chunk_size) {
  auto* pool = static_cast<ChunkPool*>(*per_buffer);
  if (pool == nullptr) {
    pool = new (std::nothrow) ChunkPool;
    if (pool == nullptr) return nullptr;
    *per_buffer = pool;
  }
  // Refusing a chunk is how OTF2 is told to write the full ones out (OTF2_Buffer_RequestNewChunk). The limit
  // travels as the callback's user data, so every archive has its own.
  const auto limit = reinterpret_cast<std::uintptr_t>(user);
  if (type == OTF2_FILETYPE_EVENTS && pool->chunks.size() >= limit) {
    return nullptr;
  }
  void* chunk = std::malloc(chunk_size);
  if (chunk != nullptr) pool->chunks.push_back(chunk);
  return chunk;
}

void free_chunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto* pool = static_cast<ChunkPool*>(*per_buffer);
  if (pool == nullptr) return;
  for (void* c : pool->chunks) std::free(c);
  pool->chunks.clear();
  if (final) {
    delete pool;
    *per_buffer = nullptr;
  }
}

constexpr OTF2_MemoryCallbacks kMemoryCallbacks = {allocate_chunk, free_chunks};

/// Runs one part of the content. An exception from it becomes a failure with its message: the file steps after
/// it must still run on this process, since they are collective under MPI callbacks.
template <typename Part>
bool run_part(const Part& part, std::string& error) noexcept {
  try {
    return part();
  } catch (const std::exception& e) {
    if (error.empty()) error = e.what();
  } catch (...) {
    if (error.empty()) error = "an unknown exception";
  }
  return false;
}

/// A location's local definitions: what `part` writes, if anything (OTF2 readers expect the file even when empty).
bool write_local_definitions(OTF2_Archive* archive, std::uint64_t location, const ArchiveParts& parts,
                             std::string& error) {
  OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, location);
  if (dw == nullptr) {
    if (error.empty()) error = "cannot open the local definition writer of location " + std::to_string(location);
    return false;
  }
  const bool ok =
      !parts.local_definitions || run_part([&] { return parts.local_definitions(dw, location, error); }, error);
  return try_otf2(OTF2_Archive_CloseDefWriter(archive, dw), "closing a local definition writer", error) && ok;
}

}  // namespace

namespace {

thread_local std::string t_otf2_message;

OTF2_ErrorCode keep_otf2_message(void* /*user_data*/, const char* /*file*/, uint64_t /*line*/, const char* /*function*/,
                                 OTF2_ErrorCode code, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  // A failure is reported once per layer it crosses; the innermost (first) message is the informative one.
  if (t_otf2_message.empty()) t_otf2_message = text;
  return code;
}

}  // namespace

void capture_otf2_errors() {
  static std::once_flag once;
  std::call_once(once, [] { OTF2_Error_RegisterCallback(&keep_otf2_message, nullptr); });
}

std::string take_otf2_message() {
  std::string text;
  text.swap(t_otf2_message);
  return text;
}

ArchivePtr create_archive(const std::string& dir, std::string& error, std::uint32_t event_chunks) {
  capture_otf2_errors();
  (void)take_otf2_message();
  ArchivePtr a(OTF2_Archive_Open(dir.c_str(), std::string(trace::kArchiveName).c_str(), OTF2_FILEMODE_WRITE,
                                 OTF2_CHUNK_SIZE_EVENTS_DEFAULT, OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT,
                                 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!a) {
    error = "cannot create an OTF2 archive in " + dir;
    return nullptr;
  }
  void* limit = reinterpret_cast<void*>(static_cast<std::uintptr_t>(event_chunks));
  if (!try_otf2(OTF2_Archive_SetFlushCallbacks(a.get(), &kFlushCallbacks, nullptr), "setting flush callbacks", error) ||
      !try_otf2(OTF2_Archive_SetMemoryCallbacks(a.get(), &kMemoryCallbacks, limit), "setting memory callbacks",
                error)) {
    return nullptr;
  }
  return a;
}

bool write_archive(ArchivePtr archive, const ArchiveParts& parts, std::string& error) noexcept {
  OTF2_Archive* a = archive.get();
  std::vector<std::uint64_t> locations;
  bool ok = try_otf2(OTF2_Archive_OpenEvtFiles(a), "opening event files", error);
  ok = ok && run_part([&] { return parts.events(a, locations, error); }, error);
  ok = try_otf2(OTF2_Archive_CloseEvtFiles(a), "closing event files", error) && ok;
  ok = try_otf2(OTF2_Archive_OpenDefFiles(a), "opening definition files", error) && ok;
  for (const std::uint64_t l : locations) ok = ok && write_local_definitions(a, l, parts, error);
  ok = try_otf2(OTF2_Archive_CloseDefFiles(a), "closing definition files", error) && ok;
  ok = run_part([&] { return parts.global_definitions(a, error); }, error) && ok;
  ok = try_otf2(OTF2_Archive_Close(archive.release()), "closing the archive", error) && ok;
  return ok;
}

}  // namespace p3s::interpose
