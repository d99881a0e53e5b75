// PipeInputs.h -- the pushed-state block the backends read through (seed 001 section
// 9.2, seed 004 section 6.2), organised by memo key rather than by read site. Each field
// is the storage behind one accessor of catalogue/PipeInputs.def; Coverage.def (G6),
// FillPoints.def (G5) and FieldOwnership.def (G8) key on these fields.
#pragma once
#include "MGPipeTypes.h"

struct IndexedCapabilities {
    Bool Blend[8];
    Bool ScissorTest[16];
};

struct BlendFuncIndexed {
    BlendFactor SrcRGB;
    BlendFactor DstRGB;
    BlendFactor SrcAlpha;
    BlendFactor DstAlpha;
};

struct BlendEquationIndexed {
    BlendEquation ModeRGB;
    BlendEquation ModeAlpha;
};

struct PipeInputs {
    // ---- render state (seed 000 section 5) ----
    RenderStateParameters m_renderState;
    Uint16 m_renderStateParametersVersion;
    Uint16 m_pipelineStateVersion;
    Bool m_capability[35];                    // indexed by CapabilityInput
    IndexedCapabilities m_capabilityIndexed;
    IntVec4 m_viewport;                       // resolved viewport 0
    FloatVec4 m_viewportIndexed[16];
    IntVec4 m_scissorBox;
    FloatVec2 m_depthRange[16];
    StencilFaceState m_stencil[2];
    BoolVec4 m_colorMask[8];
    FloatVec4 m_clearColor;
    Float m_clearDepth;
    Uint32 m_clearStencil;
    FloatVec4 m_blendColor;
    BlendFuncIndexed m_blendFunc[8];
    BlendEquationIndexed m_blendEquation[8];
    LogicOperation m_logicOp;
    DepthTestFunc m_depthFunc;
    Bool m_depthMask;
    CullFaceMode m_cullFaceMode;
    ProvokingVertexMode m_provokingVertexMode;
    Float m_lineWidth;
    Float m_polygonOffsetFactor;
    Float m_polygonOffsetUnits;
    GLenum m_polygonModeFront;
    Float m_minSampleShadingValue;
    Uint32 m_primitiveRestartIndex;
    GLenum m_clampReadColor;
    Uint32 m_patchVertices;
    FloatVec4 m_patchOuter;
    FloatVec2 m_patchInner;
    PixelStoreParameters m_pixelStore;
    // ---- objects (handles + POD descriptors) ----
    MGPFramebufferState m_framebuffer;
    Int8 m_drawBuffers[8];
    MGPSurface m_readSurface;
    MGPSurface m_defaultFramebuffer;
    MGPipeHandle m_vertexElements;
    MGPVertexBufferWire m_vertexBuffers[32];
    MGPIndexBuffer m_indexBuffer;
    MGPIndirectBuffers m_indirectBuffers;
    MGPBufferRange m_bufferBindingPoints[3][84];
    Uint32 m_touchedBufferBindingPointCount[15];
    MGPBoundView m_samplerViews[192];
    Uint64 m_textureBindGeneration;
    MGPipeHandle m_samplers[192];
    Uint32 m_activeTextureUnit;
    Uint32 m_maxTouchedTextureUnit;
    MGPImageView m_imageUnits[32];
    MGPipeHandle m_drawProgram;
    MGPipeHandle m_dispatchProgram;
    MGPBlobRef m_globalUbo;
    Uint32 m_globalUboVersion;
    MGPAttribValue m_vertexAttribDefaults[32];
    MGPBufferRange m_xfbTargets[4];
    Bool m_xfbActive;
    Bool m_xfbPaused;
    Uint64 m_xfbCapturedVertices;
    Int32 m_uniformBlockBindings[64];
    MGPProgramSamplerUnit m_samplerUnitBindings[256];
    Uint64 m_storageBlockSignature;
    MGPTextureParams m_textureParams;
    GLbitfield m_pendingBarrierBits;
    Int32 m_swapInterval;
    MGPipeHandle m_activeQueries[8];
};
