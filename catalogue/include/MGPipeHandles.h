// MGPipeHandles.h -- handles are {slot, gen}, minted by the client, never returned by the
// server (seed 001 section 2.1).
#pragma once
#include "MGPipeBase.h"

// 8-byte POD passed by value. {0,0} is null; {0,1} of kind Framebuffer is the default
// framebuffer. Gen bumps only when a slot is reused, never on respecify.
struct MGPipeHandle {
    Uint32 Slot;
    Uint32 Gen;
};

enum class MGPipeHandleKind : Uint8 {
    Buffer = 0,
    Texture = 1,
    Renderbuffer = 2,
    Framebuffer = 3,
    Xfb = 4,
    RenderStateCso = 5,
    VertexElementsCso = 6,
    SamplerCso = 7,
    SamplerViewCso = 8,
    ShaderCso = 9,
    Fence = 10,
    Query = 11,
    Context = 12,
};

enum : Uint32 {
    // Kinds that share ONE slot space, spelled "Resource" in HandleFields.def:
    // ResourceDestroy / ResourceSubData carry a bare handle, so the server could not tell
    // two kinds' slot 1 apart; the object keeps its kind (ResourceCreate's Target).
    kMGPipeResourceKindMask = (1u << static_cast<Uint32>(MGPipeHandleKind::Buffer)) |
                              (1u << static_cast<Uint32>(MGPipeHandleKind::Texture)) |
                              (1u << static_cast<Uint32>(MGPipeHandleKind::Renderbuffer)),
    // Kinds whose create may be re-issued on a live handle: one VAO, one handle, re-sent on
    // a config change (seed 001 D-G1); create_shader_state re-issued per link (seed 002).
    kMGPipeReissuableKindMask = (1u << static_cast<Uint32>(MGPipeHandleKind::VertexElementsCso)) |
                                (1u << static_cast<Uint32>(MGPipeHandleKind::ShaderCso)),
    // ShaderCso slots at and above this are reserved for program-pipeline composites: the
    // high sixteenth of a 2^20-slot table, 983040 (seed 002 §4.3).
    kMGPipeShaderCsoCompositeSlotBase = 0x000F0000u,
    // The default framebuffer's generation within slot 0 of kind Framebuffer.
    kMGPipeDefaultFramebufferGen = 1u,
};
