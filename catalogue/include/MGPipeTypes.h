// MGPipeTypes.h -- every wire payload: flat POD, explicit padding, never a pointer
// (seed 001 section 4). Sizes are pinned in catalogue/PayloadSizes.def and asserted by
// the generated PipeWire.inc; this header states fields only.
#pragma once
#include "MGPipeBase.h"
#include "MGPipeHandles.h"
#include "MGPipeHostSpan.h"
#include "MGPipeValueTypes.h"

enum : Uint32 {
    // A wire record's Size (header included) and every tail's start are multiples of this;
    // so are SEG_STAGE allocations (seed 001 section 4).
    kMGPipeRecordAlign = 8,
    kMGPipeCsoCacheCapacity = 64,
    kMGPipeSamplerCacheCapacity = 256,
    kMGPipeMaxBufferBindingPoints = 84,
    kMGPipeMaxProgramBlockBindings = 64,
    kMGPipeMaxProgramSamplerUnits = 256,
    kMGPipeMaxProgramStorageOverrides = 64,
    kMGPipeMaxTextureUnits = 192,
    kMGPipeMaxVertexAttribs = 32,
    kMGPipeMaxImageUnits = 32,
    kMGPipeMaxStreamOutputTargets = 4,
    kMGPipeMaxDrawRanges = 4096,
    kMGPipeMaxSubRegions = 96,
    kMGPipeShaderBufferClassUniform = 0,
    kMGPipeShaderBufferClassShaderStorage = 1,
    kMGPipeShaderBufferClassAtomicCounter = 2,
    kMGPipeShaderBufferClassCount = 3,
    kMGPipeRenderStateChunkMaskAll = 0xFFFFFFFFu,
};

// MGPDrawInfo::Flags bits.
enum MGPDrawFlagBit : Uint8 {
    kDrawHasUserIndices = 1u << 0,
    kDrawPrimitiveRestart = 1u << 1,
    kDrawIndicesAreClient = 1u << 2,
    kDrawHasIndexRange = 1u << 3,
    kDrawHasXfbCount = 1u << 4,
    kDrawIsIndirect = 1u << 5,
    kDrawClientArrays = 1u << 6,
};

// MGPClear::Kind discriminants (glClear + glClearBuffer* + glClearNamedFramebuffer*).
enum MGPClearKind : Uint32 {
    kClearMask = 0,
    kClearBufferFloat = 1,
    kClearBufferInt = 2,
    kClearBufferUint = 3,
    kClearBufferDepthStencil = 4,
};

// MGPFramebufferState::Target.
enum MGPFramebufferTarget : Uint8 {
    kFramebufferDraw = 0,
    kFramebufferRead = 1,
    kFramebufferBoth = 2,
    kFramebufferNamed = 3,
};

// MGPResourceDesc::Target.
enum MGPResourceTarget : Uint8 {
    kResourceBuffer = 0,
    kResourceTex1D = 1,
    kResourceTex2D = 2,
    kResourceTex3D = 3,
    kResourceTexCube = 4,
    kResourceTex1DArray = 5,
    kResourceTex2DArray = 6,
    kResourceTexCubeArray = 7,
    kResourceTex2DMS = 8,
    kResourceTex2DMSArray = 9,
    kResourceRenderbuffer = 10,
    kResourceTexBuffer = 11,
};

// ---- generic shapes --------------------------------------------------------------

struct MGPHandleOnly {
    MGPipeHandle Res;
};

struct MGPWireRecHeader {
    Uint16 Op;
    Uint16 Flags;   // ring framing, never call flags
    Uint32 Size;    // includes the header; a multiple of 8
};

struct MGPStateChunk {
    Uint16 Offset;
    Uint16 Length;
};

struct MGPBox {
    Int32 X;
    Int32 Y;
    Int32 Z;
    Uint32 W;
    Uint32 H;
    Uint32 D;
};

// ---- screen ----------------------------------------------------------------------

struct MGPCaps {
    Uint64 CallMask[2];    // bit (opcode-1): the backend registers this call
    Uint64 CapBits;        // MGPCapBit
    Uint32 BackendType;    // 0 = Espryt (GLES), 1 = Magma (Vulkan), 2 = recorder
    Uint32 MaxTextureSize;
    Uint32 MaxComputeWorkGroupSize[3];
    Uint32 Pad0;
    MGPBlobRef FormatCaps;
    MGPBlobRef RendererString;
};

struct MGPResourceDesc {
    MGPipeHandle Res;
    Uint8 Target;            // MGPResourceTarget
    Uint8 StorageKind;       // 0 = mipmap storage, 1 = buffer storage
    Uint16 BindMask;
    Uint32 InternalFormat;
    Uint32 Width;
    Uint32 Height;
    Uint32 Depth;
    Uint16 ArrayLayers;
    Uint16 Levels;
    Uint16 Samples;
    Uint8 FixedSampleLocations;
    Uint8 Immutable;
    Uint32 Usage;
    Uint32 StorageFlags;
    Uint8 HasDefinedContent;
    Uint8 ImageBindableHint;
    Uint8 HasLiveHostWrites;
    Uint8 Pad0;
    Uint32 GlNameForDiag;    // diagnostics only: never identity, never a memo key
    MGPipeHandle ViewOf;
    MGPipeHandle BufferForTexBuffer;
    Uint32 Pad1;
    Uint64 BufOffset;
    Uint64 BufSize;          // ~0 = whole buffer, resolved live
};

struct MGPFence {
    MGPipeHandle Fence;
    Uint32 Condition;
    Uint32 Flags;
};

struct MGPFenceWait {
    MGPipeHandle Fence;
    Uint64 TimeoutNs;
    Uint32 Flags;
    Uint32 Pad0;
};

// ---- query -----------------------------------------------------------------------

struct MGPQuery {
    MGPipeHandle Query;
    Uint32 Target;   // GL query target
    Uint32 Index;
};

struct MGPQueryResult {
    MGPipeHandle Query;
    Uint32 Pname;
    Uint32 Wait;
};

// ---- CSO -------------------------------------------------------------------------

// create: carries ONLY the pipeline subset's chunk bytes; ChunkMask allows an
// incremental create against BaseCso.
struct MGPRenderStateDesc {
    MGPipeHandle Cso;
    MGPipeHandle BaseCso;
    Uint32 ChunkMask;
    Uint32 Pad0;
    MGPBlobRef Blob;
};

// Steady state: 12 bytes on the wire, no hashing, no blob.
struct MGPBindRenderState {
    MGPipeHandle Cso;
    Uint16 Version;
    Uint16 PipelineVersion;
};

// The dynamic half: only the changed chunks, in ChunkMask order.
struct MGPDynamicState {
    Uint32 ChunkMask;
    Uint16 Version;
    Uint16 Pad0;
    MGPBlobRef Blob;
};

// The blob carries MGPVertexAttribWire[AttribCount] then MGPVertexBindingPointWire[BindingCount].
struct MGPVertexElements {
    MGPipeHandle Cso;
    Uint32 AttribCount;
    Uint32 BindingCount;
    MGPBlobRef Blob;
};

struct MGPVertexAttribWire {
    Uint32 Format;        // GL component type
    Uint8 Size;           // components
    Uint8 Normalized;
    Uint8 IsInteger;
    Uint8 IsLong;         // carried apart from Format == Float64
    Uint32 RelativeOffset;
    Uint32 BindingIndex;
    Uint8 Enabled;
    Uint8 Pad0[3];
};

struct MGPVertexBindingPointWire {
    Uint32 Stride;
    Uint32 Divisor;
};

// The blob is a SamplerParameters, byte for byte.
struct MGPSamplerDesc {
    MGPipeHandle Cso;
    MGPBlobRef Blob;
};

// A sampler view carries only view limits; texture parameters live on the texture.
struct MGPSamplerView {
    MGPipeHandle Cso;
    MGPipeHandle Texture;
    Uint32 InternalFormat;
    Uint8 Target;
    Uint8 Pad0[3];
    Uint16 MinLevel;
    Uint16 NumLevels;
    Uint16 MinLayer;
    Uint16 NumLayers;
    Uint16 Samples;
    Uint8 FixedSampleLocations;
    Uint8 Pad1;
};

struct MGPProgramDesc {
    MGPipeHandle Cso;
    Uint32 StageMask;
    Uint32 GlobalUboSize;
    Uint32 ReservedNumSamplesOffset;
    Uint8 SpirvStatus;
    Uint8 NativeFloat64;
    Uint8 PointSizeDemoted;
    Uint8 EnableSpirvValidation;
    Uint8 LinkStatus;        // grew the descriptor 192 -> 200 (seed 002 section 1)
    Uint8 Pad0[7];
    MGPBlobRef Spirv[6];
    MGPBlobRef Reflection;
};

// ---- state -----------------------------------------------------------------------

struct MGPSurface {
    MGPipeHandle Res;
    Uint32 InternalFormat;
    Uint8 Kind;              // 0 none, 1 texture, 2 renderbuffer
    Uint8 Layered;
    Uint16 Level;
    Uint32 Layer;
    Uint16 UploadTarget;
    Uint16 Pad0;
};

struct MGPFramebufferState {
    MGPipeHandle Fbo;        // {0,1} = the default framebuffer
    MGPSurface Color[8];
    MGPSurface Depth;
    MGPSurface Stencil;
    MGPSurface ReadSurface;  // resolved by the client, not an index
    Int8 DrawBuffers[8];     // attachment index, -1 = NONE
    Uint16 Width;
    Uint16 Height;
    Uint16 Layers;
    Uint16 Samples;
    Uint8 FixedSampleLocations;
    Uint8 IsDefault;
    Uint8 Complete;
    Uint8 Target;            // MGPFramebufferTarget
    Uint32 Pad0;
    Uint64 ContentHash;      // server render-pass memo key and client emission suppressor
};

// Tail: MGPVertexBufferWire[Count].
struct MGPVertexBuffers {
    Uint32 Start;
    Uint32 Count;
    Uint64 ContentHash;
};

struct MGPVertexBufferWire {
    MGPipeHandle Res;
    Uint64 Offset;
    Uint32 Stride;
    Uint32 Pad0;
};

struct MGPIndexBuffer {
    MGPipeHandle Res;
    Uint32 IndexSize;
    Uint32 Pad0;
};

struct MGPIndirectBuffers {
    MGPipeHandle DrawIndirect;
    MGPipeHandle Parameter;
};

// Tail: MGPBoundView[Count].
struct MGPSamplerViews {
    Uint32 Start;
    Uint32 Count;
    Uint64 ContentHash;
};

struct MGPBoundView {
    MGPipeHandle View;
    MGPipeHandle Texture;
};

// Tail: MGPipeHandle[Count].
struct MGPSamplerStates {
    Uint32 Start;
    Uint32 Count;
    Uint64 ContentHash;
};

// Tail: MGPImageView[Count].
struct MGPShaderImages {
    Uint32 Start;
    Uint32 Count;
    Uint64 ContentHash;
};

struct MGPImageView {
    MGPipeHandle Res;
    Uint32 Format;
    Uint16 Level;
    Uint8 Layered;
    Uint8 Access;            // 0 read-only, 1 write-only, 2 read-write
    Uint32 Layer;
    Uint32 Pad0;
};

// Tail 1: MGPBufferRange[Count]; tail 2 (Uniform class, kCapNeedsHostUboBytes only):
// MGHostSpan[HostSpanCount].
struct MGPShaderBuffers {
    Uint32 Class;
    Uint32 Start;
    Uint32 Count;
    Uint32 HostSpanCount;
    Uint64 WritableMask;
    Uint64 ContentHash;
};

struct MGPBufferRange {
    MGPipeHandle Res;
    Uint64 Offset;
    Uint64 Size;
};

// Tail: MGPBufferRange[Count] then Uint32 Offsets[Count].
struct MGPStreamOutputTargets {
    Uint32 Count;
    Uint32 Pad0;
    Uint64 Generation;
    Uint64 ContentHash;
};

struct MGPGlobalConstants {
    MGPipeHandle ShaderCso;
    Uint32 Version;
    Uint32 Pad0;
    MGPBlobRef Blob;
};

// Tail: MGPAttribValue[Count], Count == popcount(Mask).
struct MGPVertexAttribDefaults {
    Uint32 Mask;
    Uint32 Count;
    Uint64 ContentHash;
};

struct MGPAttribValue {
    Uint32 Bits[4];
    Uint32 Kind;             // 0 float, 1 int, 2 uint
};

struct MGPPixelPackState {
    PixelStoreParameters Pack;
};

struct MGPPatchState {
    Uint32 Vertices;
    Float OuterLevel[4];
    Float InnerLevel[2];
    Uint32 Pad0;
    Uint64 VariantKey;       // bitwise key: patch state is also a shader-variant input
};

struct MGPProgramBinding {
    MGPipeHandle ShaderCso;
};

// The blob is a ResidualValueBlock (the migration-time carrier, seed 001 section 9.4).
struct MGPResidualValueState {
    MGPBlobRef Blob;
};

struct ResidualValueBlock {
    Uint64 CapabilityBits;
};

// ---- object ----------------------------------------------------------------------

// Tail: MGPSubRegion[RegionCount]; the bytes are in Blob.
struct MGPSubData {
    MGPipeHandle Res;
    Uint16 Target;
    Uint16 Level;
    Uint8 SourceIsVerbatimLevelShadow;
    Uint8 HasLiveHostWrites;
    Uint8 Pad0[2];
    MGPBox UnionBox;
    Uint32 RegionCount;
    Uint32 Pad1;
    MGPBlobRef Blob;
};

struct MGPSubRegion {
    Int32 X;
    Int32 Y;
    Int32 Z;
    Uint32 W;
    Uint32 H;
    Uint32 D;
    Uint64 SrcOffset;
    Uint32 SrcRowStride;     // 0 = tight
    Uint32 SrcSliceStride;   // 0 = tight
};

struct MGPBufferSubDataResident {
    MGPipeHandle Res;
    Uint64 Offset;
    MGPBlobRef Blob;
};

struct MGPTextureParams {
    MGPipeHandle Res;
    MGPipeHandle BuiltinSampler;   // never null (D-E1)
    Uint16 BaseLevel;
    Uint16 MaxLevel;
    Uint8 Swizzle[4];
    Uint8 DepthStencilMode;
    Uint8 SamplerResync;
    Uint8 ForceResync;
    Uint8 Pad0;
    Float MinLod;
    Float MaxLod;
    Float LodBias;
};

struct MGPSubDataComplete {
    MGPipeHandle Res;
    Uint16 Target;
    Uint16 FirstLevel;
    Uint16 LevelCount;
    Uint16 Pad0;
    Uint64 PullSerial;
};

struct MGPFlushRange {
    MGPipeHandle Res;
    Uint64 Offset;
    Uint64 Size;
    Uint32 AccessFlags;
    Uint32 Pad0;
};

struct MGPReadback {
    MGPipeHandle Res;
    Uint64 Offset;
    Uint64 Size;
};

struct MGPCopyRegion {
    MGPipeHandle Dst;
    MGPipeHandle Src;
    Uint32 DstLevel;
    Uint32 SrcLevel;
    MGPBox DstBox;
    MGPBox SrcBox;
};

struct MGPGenerateMipmap {
    MGPipeHandle Res;
    Uint32 Target;
    Uint32 Pad0;
};

struct MGPGetTextureImage {
    MGPipeHandle Res;
    Uint32 Level;
    Uint32 Format;
    Uint32 Type;
    Uint32 Pad0;
    MGPBlobRef Dst;
};

// ---- verbs -----------------------------------------------------------------------

struct MGPBlit {
    MGPipeHandle SrcFbo;
    MGPipeHandle DstFbo;
    Int32 SrcRect[4];
    Int32 DstRect[4];
    Uint32 Mask;
    Uint32 Filter;
};

struct MGPClear {
    Uint32 Kind;             // MGPClearKind
    Uint32 Mask;
    Int32 DrawBuffer;
    Int32 Stencil;
    Uint32 ColorBits[4];     // float/int/uint bits per Kind
    Float Depth;
    Uint32 Pad0;
    MGPipeHandle Fbo;
};

struct MGPReadPixels {
    Int32 X;
    Int32 Y;
    Uint32 Width;
    Uint32 Height;
    Uint32 Format;
    Uint32 Type;
    MGPipeHandle PackBuffer;
    Uint64 PackOffset;
    MGPBlobRef Dst;
};

// Tail: MGPDrawIndirect (kDrawIsIndirect) or MGPDrawRange[NumDraws], then MGHostSpan
// (kDrawHasUserIndices).
struct MGPDrawInfo {
    Uint32 Mode;
    Uint8 IndexSize;         // 0 = arrays, else 1/2/4
    Uint8 Flags;             // MGPDrawFlagBit
    Uint16 Pad0;
    Uint32 InstanceCount;
    Uint32 StartInstance;
    Uint32 RestartIndex;
    Uint32 NumDraws;
    MGPipeHandle IndexResource;
    Uint32 MinIndex;         // kDrawHasIndexRange
    Uint32 MaxIndex;
    Uint64 XfbCpuCapturedVertices;  // kDrawHasXfbCount
    Uint32 DrawIdOffset;
    Uint32 Pad1;
};

struct MGPDrawRange {
    Uint32 Start;
    Uint32 Count;
    Int32 IndexBias;
};

struct MGPDrawIndirect {
    MGPipeHandle IndirectResource;
    Uint64 IndirectOffset;
    Uint32 Stride;
    Uint32 DrawCount;        // resolved by the client
    MGPipeHandle ParameterResource;
    Uint64 ParameterOffset;
};

struct MGPGridInfo {
    Uint32 GroupCount[3];
    Uint32 Pad0;
    MGPipeHandle IndirectResource;
    Uint64 IndirectOffset;
};

struct MGPMemoryBarrier {
    GLbitfield Bits;
    Uint32 ByRegion;
};

struct MGPBeginStreamOutput {
    Uint32 PrimitiveMode;
    Uint32 Pad0;
};

struct MGPXfbAccounting {
    Uint64 PrimitivesWritten;
    Uint64 CapturedVertices;
};

struct MGPFlush {
    Uint32 Flags;
    Uint32 Pad0;
};

struct MGPPresent {
    Uint64 FrameSerial;      // client-minted, 1-based; 0 is ProtocolCorruption
};

struct MGPSwapInterval {
    Int32 Interval;
    Uint32 Pad0;
};

struct MGPBindShaderImage {
    Uint32 Unit;
    Uint32 Pad0;
    MGPImageView View;
};

struct MGPPatchParameter {
    Uint32 Pname;
    Uint32 Vertices;
    Float Values[4];
};

struct MGPBindStreamOutput {
    MGPipeHandle Xfb;
};

struct MGPStorageBlockBinding {
    MGPipeHandle ShaderCso;
    Uint32 BlockIndex;
    Uint32 Binding;
};

struct MGPCopyFramebufferToTexture {
    MGPipeHandle Dst;
    Uint32 Level;
    Uint32 Target;
    Int32 DstOffset[3];
    Int32 SrcRect[4];
    Uint32 Pad0;
};

// ---- appended rows (seed 002) ----------------------------------------------------

// Forwards an object's death between the wire delete and the slot free.
struct MGPObjectDeath {
    MGPipeHandle Object;
    Uint8 Kind;              // MGPipeHandleKind
    Uint8 Pad0[3];
    Uint32 Reason;           // 0 = deleted by the application, 1 = context teardown
};

// Clears the applier's windows on make-current; advances (never zeroes) the serials.
struct MGPApplierReset {
    Uint64 ContextSerial;
    Uint32 Reason;
    Uint32 Pad0;
};

struct MGPContextValues {
    Uint32 MaxTouchedTextureUnit;
    Uint32 TouchedBufferBindingPointCount[15];
    Uint8 IsTransformFeedbackActive;
    Uint8 IsTransformFeedbackPaused;
    Uint8 Pad0[6];
    Uint64 ContextSerial;
};

// Three positional tails, empty ones included: Int32 BlockBindings[BlockBindingCount],
// MGPProgramSamplerUnit[SamplerUnitCount], MGPProgramStorageOverride[StorageOverrideCount].
struct MGPProgramBindings {
    MGPipeHandle Cso;
    Uint64 Signature;
    Uint32 BlockBindingCount;
    Uint32 SamplerUnitCount;
    Uint32 StorageOverrideCount;
    Uint32 Pad0;
};

struct MGPProgramSamplerUnit {
    Uint32 Location;
    Int32 Unit;
};

struct MGPProgramStorageOverride {
    MGHostSpan Name;
    Int32 Binding;
    Uint32 Pad0;
};
