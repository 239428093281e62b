// SPDX-License-Identifier: BSD-3-Clause
// Baseline for the analyzer benchmark: read every event record of an OTF2 archive with the OTF2 library and
// do nothing with it (count), the least any analysis of the archive must cost.
#include <cstdint>
#include <cstdio>
#include <string>

#include <otf2/otf2.h>

namespace {
OTF2_CallbackCode count(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user, OTF2_AttributeList*) {
  ++*static_cast<std::uint64_t*>(user);
  return OTF2_CALLBACK_SUCCESS;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: otf2_read ARCHIVE/traces.otf2\n");
    return 2;
  }
  OTF2_Reader* reader = OTF2_Reader_Open(argv[1]);
  if (reader == nullptr) {
    std::fprintf(stderr, "otf2_read: cannot open %s\n", argv[1]);
    return 1;
  }
  OTF2_Reader_SetSerialCollectiveCallbacks(reader);
  uint64_t locations = 0;
  OTF2_Reader_GetNumberOfLocations(reader, &locations);
  OTF2_Reader_OpenEvtFiles(reader);
  // Read location by location, as the analyzer's first pass does, through the global event reader's
  // merged stream would add a heap; the per-location readers are the cheaper baseline.
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader);
  struct Ids {
    std::uint64_t ids[1 << 16];
    std::uint64_t n = 0;
  };
  static Ids ids;
  OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      gcb, [](void* u, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType, uint64_t, OTF2_LocationGroupRef) {
        auto* x = static_cast<Ids*>(u);
        if (x->n < (1 << 16)) x->ids[x->n++] = self;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, gcb, &ids);
  uint64_t defs = 0;
  OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &defs);
  OTF2_GlobalDefReaderCallbacks_Delete(gcb);
  std::uint64_t events = 0;
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cb, count);
  // Every record kind p3s writes, counted by the same callback shape.
  OTF2_EvtReaderCallbacks_SetEnterCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, OTF2_RegionRef) {
        return count(l, t, p, u, a);
      });
  OTF2_EvtReaderCallbacks_SetLeaveCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, OTF2_RegionRef) {
        return count(l, t, p, u, a);
      });
  OTF2_EvtReaderCallbacks_SetMetricCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, OTF2_MetricRef, uint8_t,
             const OTF2_Type*, const OTF2_MetricValue*) { return count(l, t, p, u, a); });
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, uint32_t, OTF2_CommRef,
             uint32_t, uint64_t) { return count(l, t, p, u, a); });
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, uint32_t, OTF2_CommRef,
             uint32_t, uint64_t) { return count(l, t, p, u, a); });
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, uint32_t, OTF2_CommRef,
             uint32_t, uint64_t, uint64_t) { return count(l, t, p, u, a); });
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, uint32_t, OTF2_CommRef,
             uint32_t, uint64_t, uint64_t) { return count(l, t, p, u, a); });
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, uint64_t) {
        return count(l, t, p, u, a);
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, uint64_t) {
        return count(l, t, p, u, a);
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a) {
        return count(l, t, p, u, a);
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(
      cb, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t p, void* u, OTF2_AttributeList* a, OTF2_CollectiveOp,
             OTF2_CommRef, uint32_t, uint64_t, uint64_t) { return count(l, t, p, u, a); });
  for (std::uint64_t i = 0; i < ids.n; ++i) {
    OTF2_EvtReader* r = OTF2_Reader_GetEvtReader(reader, ids.ids[i]);
    OTF2_Reader_RegisterEvtCallbacks(reader, r, cb, &events);
    uint64_t read = 0;
    OTF2_Reader_ReadAllLocalEvents(reader, r, &read);
    OTF2_Reader_CloseEvtReader(reader, r);
  }
  OTF2_EvtReaderCallbacks_Delete(cb);
  OTF2_Reader_CloseEvtFiles(reader);
  OTF2_Reader_Close(reader);
  std::printf("otf2_read events %llu locations %llu\n", static_cast<unsigned long long>(events),
              static_cast<unsigned long long>(ids.n));
  return 0;
}
