// SPDX-License-Identifier: BSD-3-Clause
// Archive placement on disk.
#include "archive_io.hpp"

#include <cstdlib>
#include <filesystem>
#include <new>
#include <system_error>
#include <vector>

#include "p3s/trace/schema.hpp"

namespace p3s::interpose {
namespace fs = std::filesystem;
namespace {

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

}  // namespace

std::string partial_dir(const std::string& dir) { return (fs::path(dir) / trace::kPartialDir).string(); }
std::string raw_dir(const std::string& dir) { return (fs::path(dir) / trace::kRawDir).string(); }
std::string raw_log_path(const std::string& dir, int rank, unsigned thread) {
  return (fs::path(raw_dir(dir)) / (std::to_string(rank) + "." + std::to_string(thread) + ".raw")).string();
}

ArchivePtr create_archive(const std::string& partial, std::string& error, std::uint32_t event_chunks) {
  ArchivePtr a(OTF2_Archive_Open(partial.c_str(), std::string(trace::kArchiveName).c_str(), OTF2_FILEMODE_WRITE,
                                 OTF2_CHUNK_SIZE_EVENTS_DEFAULT, OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT,
                                 OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!a) {
    error = "cannot create an OTF2 archive in " + partial;
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

namespace {
bool remove_all(const fs::path& p, std::string& error) {
  std::error_code ec;
  fs::remove_all(p, ec);
  if (ec) error = "cannot remove " + p.string() + ": " + ec.message();
  return !ec;
}
}  // namespace

bool clear_published_archive(const std::string& dir, std::string& error) {
  const std::string name(trace::kArchiveName);
  // The anchor goes first, so an interrupted removal never leaves an anchor pointing at missing data.
  return remove_all(fs::path(dir) / (name + ".otf2"), error) && remove_all(fs::path(dir) / (name + ".def"), error) &&
         remove_all(fs::path(dir) / name, error);
}

bool clear_archive(const std::string& dir, std::string& error) {
  return remove_all(partial_dir(dir), error) && clear_published_archive(dir, error);
}

bool publish_archive(const std::string& dir, std::string& error) {
  const std::string name(trace::kArchiveName);
  const fs::path from(partial_dir(dir));
  std::error_code ec;
  for (const std::string& entry : {name, name + ".def", name + ".otf2"}) {
    fs::rename(from / entry, fs::path(dir) / entry, ec);
    if (ec) {
      error = "cannot move " + (from / entry).string() + " into " + dir + ": " + ec.message();
      return false;
    }
  }
  fs::remove_all(from, ec);
  return true;
}

}  // namespace p3s::interpose
