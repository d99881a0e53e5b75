// The runtime half of the compile test: the generated checks, run on crafted inputs.
// (Appended after the headers and every generated .inc by tests/test_generator.py.)
#include "PipeWireLayout.inc"  // not in the TU's list of outputs: its rows are checked below
#include "PipeFillPoints.inc"
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

MGPipeScreen gMGPipeScreen;
MGPipeContext gMGPipeContext;

static int g_failures = 0;
#define EXPECT(cond)                                                      \
    do {                                                                  \
        if (!(cond)) {                                                    \
            std::printf("FAILED: %s (line %d)\n", #cond, __LINE__);       \
            ++g_failures;                                                 \
        }                                                                 \
    } while (0)

static bool Same(const char* a, const char* b) { return a && b && std::strcmp(a, b) == 0; }

static void CheckRecords() {
    alignas(8) Uint8 rec[256] = {};
    const auto op = [](MGPWireOp o) { return static_cast<Uint16>(o); };
    MGPWireRecHeader h{op(MGPWireOp::BindRenderState), 0, kMGPipeFixedRecordBytes[op(MGPWireOp::BindRenderState)]};
    std::memcpy(rec, &h, sizeof h);
    EXPECT(MGPipeCheckRecord(rec, sizeof rec).Ok);
    EXPECT(Same(MGPipeCheckRecord(rec, 4).Reason, "Record.Header"));
    EXPECT(Same(MGPipeCheckRecord(rec, h.Size - 8).Reason, "Record.Truncated"));
    h.Size += 8;  // a fixed-size call may not carry a tail
    std::memcpy(rec, &h, sizeof h);
    EXPECT(Same(MGPipeCheckRecord(rec, sizeof rec).Reason, "BindRenderState.Size"));
    h.Size = 12;
    std::memcpy(rec, &h, sizeof h);
    EXPECT(Same(MGPipeCheckRecord(rec, sizeof rec).Reason, "Record.Size"));
    h = {op(MGPWireOp::kOpCount), 0, 16};
    std::memcpy(rec, &h, sizeof h);
    EXPECT(Same(MGPipeCheckRecord(rec, sizeof rec).Reason, "Record.Op"));
    h = {op(MGPWireOp::DrawVbo), 0, kMGPipeFixedRecordBytes[op(MGPWireOp::DrawVbo)] + 24u};  // a tail is legal
    std::memcpy(rec, &h, sizeof h);
    EXPECT(MGPipeCheckRecord(rec, sizeof rec).Ok);
    MGPBlobRef blob{16, 32, kMGPipeSegStage, 0};
    EXPECT(MGPipeCheckBlob(blob, 48, "SetDynamicState.Blob").Ok);
    EXPECT(Same(MGPipeCheckBlob(blob, 40, "SetDynamicState.Blob").Reason, "SetDynamicState.Blob"));
    blob.Offset = ~0ull;
    EXPECT(!MGPipeCheckBlob(blob, 48, "X").Ok);
    EXPECT(MGPipeWaitClassFor(MGPWireOp::Present) == kWaitPresent);
    EXPECT(MGPipeWaitClassFor(MGPWireOp::ReadPixels) == kWaitReply);
    EXPECT((MGPipeCallFlagsFor(MGPWireOp::DrawVbo) & kVarTail) != 0);
    EXPECT(MGPipeCallFlagsFor(static_cast<MGPWireOp>(0xffff)) == kNone);  // out of range: empty
    EXPECT(MGPipeCallClassFor(MGPWireOp::Present) == kCtxVerb);
    // the applier's bounds gate passes a well-formed record and reports no decoder installed
    EXPECT(!MGPipeApplyWireRecord(MGPWireOp::BindRenderState, rec, sizeof(MGPWireRec_BindRenderState), 256));
    EXPECT(MGPipeWireRecordFits(sizeof(MGPWireRec_BindRenderState), sizeof(MGPWireRec_BindRenderState), 256));
    EXPECT(!MGPipeWireRecordFits(sizeof(MGPWireRec_BindRenderState), sizeof(MGPWireRec_BindRenderState) + 4, 256));
    EXPECT(!MGPipeWireRecordFits(sizeof(MGPWireRec_BindRenderState), sizeof(MGPWireRec_BindRenderState), 8));
}

static void CheckVerify() {
    RenderStateParameters a{}, b{};
    EXPECT(MGPipeVerify_RenderStateParameters(a, b) == nullptr);
    a.LineWidth = 0.0f;
    b.LineWidth = -0.0f;
    EXPECT(a.LineWidth == b.LineWidth);  // equal by value ...
    EXPECT(Same(MGPipeVerify_RenderStateParameters(a, b), "LineWidth"));  // ... not by bits
    Uint32 nan1 = 0x7fc00001u, nan2 = 0x7fc00002u;
    std::memcpy(&a.LineWidth, &nan1, 4);
    std::memcpy(&b.LineWidth, &nan2, 4);
    EXPECT(Same(MGPipeVerify_RenderStateParameters(a, b), "LineWidth"));
    b = a;
    b.StencilStates[1].Ref = 7;
    EXPECT(Same(MGPipeVerify_RenderStateParameters(a, b), "StencilStates"));
    MGPDrawInfo d1{}, d2{};
    d2.IndexResource.Gen = 2;
    EXPECT(Same(MGPipeVerify_MGPDrawInfo(d1, d2), "IndexResource"));
}

static void CheckPoison() {
    static MGPipePoison p{};
    MGPipeEnterVerb(p, static_cast<Uint16>(MGPWireOp::DrawVbo));
    EXPECT(MGPipeCheckRead(p, MGPipeInputField::GetRenderStateParameters) == nullptr);
    EXPECT(Same(MGPipeCheckRead(p, MGPipeInputField::GetClearColor), "GetClearColor"));
    MGPipeEnterVerb(p, static_cast<Uint16>(MGPWireOp::Clear));
    EXPECT(MGPipeCheckRead(p, MGPipeInputField::GetClearColor) == nullptr);
    MGPipeEnterVerb(p, static_cast<Uint16>(MGPWireOp::Flush));  // validates nothing: every per-verb read is stale
    EXPECT(Same(MGPipeCheckRead(p, MGPipeInputField::GetRenderStateParameters), "GetRenderStateParameters"));
}

static void CheckWireLayout() {
    // every call's row carries the columns the per-opcode tables hold
    for (const auto& c : kMGPipeWireCallLayouts) {
        const auto op = static_cast<MGPWireOp>(c.Op);
        EXPECT(c.Flags == MGPipeCallFlagsFor(op));
        EXPECT(c.Wait == static_cast<Uint64>(MGPipeWaitClassFor(op)));
        EXPECT(Same(c.Name, kMGPipeCallName[c.Op]));
    }
    EXPECT(sizeof(kMGPipeWireCallLayouts) / sizeof(kMGPipeWireCallLayouts[0]) == kMGPipeCallCount);
    // a struct row is followed by its members, each inside it
    Uint64 size = 0;
    for (const auto& m : kMGPipeWireLayoutMembers) {
        if (std::strchr(m.Name, '.') == nullptr) size = m.Size;
        else EXPECT(m.Offset + m.Size <= size);
    }
}

static void CheckFillPoints() {
    // a class may read every sticky field, and a verb's class is one of the classes
    for (SizeT c = 0; c < kMGPipeVerbClassCount; ++c)
        for (SizeT f = 0; f < kMGPipeInputFieldCount; ++f)
            if (kMGPipeInputFieldSticky[f])
                EXPECT(MGPipeFieldMaskHas(kMGPipeClassFieldMask[c], static_cast<MGPipeInputField>(f)));
    for (SizeT v = 0; v < kMGPipeVerbCount; ++v)
        EXPECT(static_cast<SizeT>(kMGPipeVerbClass[v]) < kMGPipeVerbClassCount);
    EXPECT(MGPipeFieldMaskHas(kMGPipeClassFieldMask[static_cast<SizeT>(kMGPipeVerbClass[0])],
                              MGPipeInputField::GetRenderStateParameters) ==
           (kMGPipeVerbClass[0] == MGPipeVerbClass::kDraw));
}

static void CheckSpans() {
    Uint32 covered = 0;
    for (const auto& c : kMGPipeRenderStateChunks) covered += c.Length;
    EXPECT(covered == sizeof(RenderStateParameters));
    EXPECT(kMGPipePipelineChunkCount == sizeof(kMGPipePipelineChunks) / sizeof(kMGPipePipelineChunks[0]));
    Uint32 owned = 0;
    for (auto o : kMGPipeFieldOwnership) owned += (o <= kFatal) ? 1u : 0u;
    EXPECT(owned == kMGPipeInputFieldCount);
}

int main() {
    CheckRecords();
    CheckVerify();
    CheckPoison();
    CheckSpans();
    CheckWireLayout();
    CheckFillPoints();
    if (g_failures) return 1;
    std::printf("all runtime checks passed\n");
    return 0;
}
