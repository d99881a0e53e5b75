// MGPipe.h -- the enumerations the catalogues are spelled in: call class, call flags,
// wait class (PipeCalls.def columns 3-5), validate classes (FillPoints.def), field
// ownership (FieldOwnership.def), render-state classes (PipeFields.def) and setter bump
// groups (RenderStateSetters.def).
#pragma once
#include "MGPipeBase.h"

enum MGPipeCallClass : Uint8 {
    kScreen = 0,
    kCtxQuery = 1,
    kCtxCso = 2,
    kCtxState = 3,
    kCtxObject = 4,
    kCtxVerb = 5,
};

enum MGPipeCallFlag : Uint32 {
    kNone = 0,
    kNeedsAck = 1u << 0,   // the client waits for an acceptance answer
    kHasBlob = 1u << 1,    // the payload owns an MGPBlobRef member
    kVarTail = 1u << 2,    // fixed prefix + self-describing inline tail(s)
    kHostSpan = 1u << 3,   // a tail may carry MGHostSpan entries
    kReplySlot = 1u << 4,  // answered into an MGPReplySlot
    kOptional = 1u << 5,   // the backend table entry may be null
};

// Seed 002 section 1: every kReplySlot row is kWaitReply and no other row is.
enum MGPipeWaitClass : Uint8 {
    kWaitNone = 0,
    kWaitApplied = 1,
    kWaitReply = 2,
    kWaitPresent = 3,
};

// Seed 001 section 5.1: the nine validate classes.
enum MGPipeValidateClass : Uint8 {
    kDraw = 0,
    kDispatch = 1,
    kClear = 2,
    kBlitOrCopy = 3,
    kTextureOp = 4,
    kReadback = 5,
    kXfbSpan = 6,
    kProgramOp = 7,
    kQuery = 8,
};

// Seed 001 section 3.1 (G8): every PipeInputs field is in exactly one of these.
enum MGPipeFieldOwnership : Uint8 {
    kRecordSupplied = 0,
    kApplierDerived = 1,
    kBarrierPulled = 2,
    kFatal = 3,
};

// Render-state byte classes (G7). kSplit names a member whose sub-members are classified.
enum MGPipeRenderStateClass : Uint8 {
    kPipeline = 0,
    kDynamic = 1,
    kSplit = 2,
};

// Which version counters a RenderState setter bumps (seed 000 section 2, groups A-D).
enum MGPipeSetterBump : Uint8 {
    kBumpBoth = 0,         // group A: m_version and m_pipelineStateVersion
    kBumpVersion = 1,      // group B: m_version only
    kBumpConditional = 2,  // group C: m_version always, pipeline version iff a pipeline byte moved
    kBumpNone = 3,         // group D: neither (state outside the parameter block)
};

// Capability bits published in MGPCaps::CapBits.
enum MGPCapBit : Uint64 {
    kCapViewportArray = 1ull << 0,
    kCapFloat64VertexAttrib = 1ull << 1,
    kCapResidentSubData = 1ull << 2,
    kCapCpuXfbPrimitiveAccounting = 1ull << 3,
    kCapTimerQuery = 1ull << 4,
    kCapOcclusionQuery = 1ull << 5,
    kCapXfbPrimitivesQuery = 1ull << 6,
    kCapNeedsHostIndexBytes = 1ull << 7,
    kCapNeedsHostUboBytes = 1ull << 8,
    kCapBackendOwnsXfbCapture = 1ull << 9,
    kCapRunAheadApply = 1ull << 10,
};
