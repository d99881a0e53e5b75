// MGPipeTypes.h -- every call's payload struct and the enums their members use.
// Declarations of MobileGL's MGPipe ABI (names, members, types, values, pinned
// sizes) written by catalogue/import_abi.py; the words are mgpipe's.
#pragma once

#include "MG_Util/Types.h"
#include "MGPipeVectors.h"
#include "MG_Backend/BackendObject.h"
#include "MGPipeHandles.h"
#include "MGPipeHostSpan.h"
#include "MGPipeValueTypes.h"

namespace MobileGL {
    struct MGPBlobRef {
        Uint64 Offset;
        Uint64 Size;
        Uint32 Seg;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPBlobRef, 24);

    struct MGPRange {
        Uint64 Offset;
        Uint64 Size;
    };
    MGP_ASSERT_POD(MGPRange, 16);

    struct MGPBox {
        Int32 X;
        Int32 Y;
        Int32 Z;
        Uint32 W;
        Uint32 H;
        Uint32 D;
    };
    MGP_ASSERT_POD(MGPBox, 24);

    struct MGPReplySlot {
        Uint64 Id;
    };
    MGP_ASSERT_POD(MGPReplySlot, 8);

    struct MGPStateChunk {
        Uint16 Offset;
        Uint16 Length;
    };
    MGP_ASSERT_POD(MGPStateChunk, 4);

    struct MGPHandleOnly {
        MGPipeHandle Handle;
        Uint32 Kind;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPHandleOnly, 16);

    enum MGPCapBit : Uint64 {
        kCapNone = 0,
        kCapViewportArray = 1,
        kCapFloat64VertexAttrib = 2,
        kCapResidentSubData = 4,
        kCapCpuXfbPrimitiveAccounting = 8,
        kCapTimerQuery = 16,
        kCapOcclusionQuery = 32,
        kCapXfbPrimitivesQuery = 64,
        kCapNeedsHostIndexBytes = 128,
        kCapNeedsHostUboBytes = 256,
        kCapBackendOwnsXfbCapture = 512,
        kCapRunAheadApply = 1024,
        kCapAdoptT0 = 2048,
    };

    struct MGPCaps {
        DynamicBackendParameters Dynamic;
        Uint64 CallMask;
        MGPBlobRef FormatCapabilities;
        MGPBlobRef RendererInfo;
    };

    enum class MGPipeResourceTarget : Uint8 {
        Buffer = 0,
        Tex1D = 1,
        Tex2D = 2,
        Tex3D = 3,
        Tex1DArray = 4,
        Tex2DArray = 5,
        TexCube = 6,
        TexCubeArray = 7,
        Tex2DMS = 8,
        Tex2DMSArray = 9,
        Renderbuffer = 10,
        TexBuffer = 11,
        TexRect = 12,
        Count = 13,
    };

    enum : Uint32 { kMGPipeResourceTargetUnmapped = 256 };

    enum MGPipeBindBit : Uint16 {
        kMGPipeBindNone = 0,
        kMGPipeBindVertex = 1,
        kMGPipeBindIndex = 2,
        kMGPipeBindConstant = 4,
        kMGPipeBindShaderBuffer = 8,
        kMGPipeBindIndirect = 16,
        kMGPipeBindSampler = 32,
        kMGPipeBindShaderImage = 64,
        kMGPipeBindRenderTarget = 128,
        kMGPipeBindDepthStencil = 256,
        kMGPipeBindStreamOutput = 512,
        kMGPipeBindAtomic = 1024,
        kMGPipeBindElementArray = 2048,
    };

    struct MGPResourceDesc {
        MGPipeHandle Resource;
        Uint8 Target;
        Uint8 StorageKind;
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
        Uint8 HasRespecifiedLevel;
        Uint8 Pad0;
        Uint32 GlNameForDiag;
        Uint16 RespecifiedUploadTarget;
        Uint16 RespecifiedLevel;
        MGPipeHandle ViewOf;
        MGPipeHandle BufferForTexBuffer;
        Uint64 BufOffset;
        Uint64 BufSize;
    };
    MGP_ASSERT_POD(MGPResourceDesc, 88);

    enum : Uint64 { kMGPipeWholeBuffer = 0xffffffffffffffff };

    struct MGPFenceWait {
        MGPipeHandle Fence;
        Uint64 TimeoutNs;
        Uint32 Flags;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPFenceWait, 24);

    struct MGPQueryDesc {
        MGPipeHandle Query;
        Uint32 Kind;
        Uint32 Stream;
    };
    MGP_ASSERT_POD(MGPQueryDesc, 16);

    struct MGPQueryResultRequest {
        MGPipeHandle Query;
        Uint8 Wait;
        Uint8 Pad0[3];
        Uint32 Pad1;
    };
    MGP_ASSERT_POD(MGPQueryResultRequest, 16);

    struct MGPTimestampRequest {
        Uint32 Reserved;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPTimestampRequest, 8);

    struct MGPRenderStateDesc {
        MGPipeHandle Cso;
        MGPipeHandle BaseCso;
        Uint32 ChunkMask;
        Uint32 Pad0;
        MGPBlobRef Blob;
    };
    MGP_ASSERT_POD(MGPRenderStateDesc, 48);

    struct MGPBindRenderState {
        MGPipeHandle Cso;
        Uint16 Version;
        Uint16 PipelineVersion;
    };
    MGP_ASSERT_POD(MGPBindRenderState, 12);

    struct MGPDynamicState {
        Uint32 ChunkMask;
        Uint16 Version;
        Uint16 Pad0;
        MGPBlobRef Blob;
    };
    MGP_ASSERT_POD(MGPDynamicState, 32);

    struct MGPVertexElements {
        MGPipeHandle Cso;
        Uint32 AttributeCount;
        Uint32 BindingPointCount;
        MGPBlobRef Blob;
    };
    MGP_ASSERT_POD(MGPVertexElements, 40);

    struct MGPSamplerDesc {
        MGPipeHandle Cso;
        MGPBlobRef Parameters;
    };
    MGP_ASSERT_POD(MGPSamplerDesc, 32);

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
    MGP_ASSERT_POD(MGPSamplerView, 36);

    struct MGPTextureParams {
        MGPipeHandle Res;
        MGPipeHandle BuiltinSampler;
        Uint16 BaseLevel;
        Uint16 MaxLevel;
        Uint8 Swizzle[4];
        Uint8 DepthStencilMode;
        Uint8 ForceResync;
        Uint8 SamplerResync;
        Uint8 Pad0;
        Float MinLod;
        Float MaxLod;
        Float LodBias;
    };
    MGP_ASSERT_POD(MGPTextureParams, 40);

    enum : Uint8 { kMGPipeDepthStencilModeDepth = 0 };

    enum : Uint8 { kMGPipeDepthStencilModeStencil = 1 };

    struct MGPProgramDesc {
        MGPipeHandle Cso;
        Uint32 StageMask;
        Uint32 GlobalUboSize;
        Uint32 ReservedNumSamplesOffset;
        Uint8 SpirvStatus;
        Uint8 NativeFloat64;
        Uint8 PointSizeDemoted;
        Uint8 EnableSpirvValidation;
        Uint8 LinkStatus;
        Uint8 Pad0[7];
        MGPBlobRef Spirv[6];
        MGPBlobRef Reflection;
    };
    MGP_ASSERT_POD(MGPProgramDesc, 200);

    enum : Uint16 { kMGPipeSurfaceNoTextureTarget = 65535 };

    struct MGPSurface {
        MGPipeHandle Res;
        Uint32 InternalFormat;
        Uint8 Kind;
        Uint8 Layered;
        Uint16 Level;
        Uint32 Layer;
        Uint16 UploadTarget;
        Uint16 TextureTarget;
    };
    MGP_ASSERT_POD(MGPSurface, 24);

    enum class MGPipeFramebufferTarget : Uint8 {
        Draw = 0,
        Read = 1,
        Both = 2,
        Named = 3,
        Count = 4,
    };

    enum : Uint32 { kMGPipeMaxColorAttachments = 8 };

    struct MGPFramebufferState {
        MGPipeHandle Fbo;
        MGPSurface Color[8];
        MGPSurface Depth;
        MGPSurface Stencil;
        MGPSurface ReadSurface;
        Int8 DrawBuffers[8];
        Uint16 Width;
        Uint16 Height;
        Uint16 Layers;
        Uint16 Samples;
        Uint8 FixedSampleLocations;
        Uint8 IsDefault;
        Uint8 Complete;
        Uint8 Target;
        Uint32 Pad1;
        Uint64 ContentHash;
    };
    MGP_ASSERT_POD(MGPFramebufferState, 304);

    enum : Uint32 { kMGPipeMaxVertexAttribs = 32 };

    enum : Uint32 { kMGPipeMaxTextureUnits = 192 };

    enum : Uint32 { kMGPipeMaxImageUnits = 192 };

    enum : Uint32 { kMGPipeMaxBufferBindingPoints = 84 };

    struct MGPVertexBuffer {
        MGPipeHandle Res;
        Uint64 Offset;
        Uint32 Stride;
        Uint32 Divisor;
        Uint32 BindingIndex;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPVertexBuffer, 32);

    struct MGPVertexBuffers {
        Uint32 Start;
        Uint32 Count;
        Uint32 BaseInstance;
        Uint32 Pad0;
        Uint64 ContentHash;
    };
    MGP_ASSERT_POD(MGPVertexBuffers, 24);

    struct MGPIndexBuffer {
        MGPipeHandle Res;
        Uint64 Offset;
        Uint32 IndexSize;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPIndexBuffer, 24);

    struct MGPIndirectBuffers {
        MGPipeHandle DrawIndirect;
        MGPipeHandle Parameter;
    };
    MGP_ASSERT_POD(MGPIndirectBuffers, 16);

    struct MGPBoundView {
        MGPipeHandle View;
        MGPipeHandle Texture;
        Uint32 Unit;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPBoundView, 24);

    struct MGPSamplerViews {
        Uint32 Start;
        Uint32 Count;
        Uint64 ContentHash;
    };
    MGP_ASSERT_POD(MGPSamplerViews, 16);

    struct MGPSamplerStates {
        Uint32 Start;
        Uint32 Count;
        Uint64 ContentHash;
    };
    MGP_ASSERT_POD(MGPSamplerStates, 16);

    struct MGPImageView {
        MGPipeHandle Res;
        Uint32 Unit;
        Uint32 InternalFormat;
        Uint32 Layer;
        Uint16 Level;
        Uint8 Layered;
        Uint8 Access;
    };
    MGP_ASSERT_POD(MGPImageView, 24);

    struct MGPShaderImages {
        Uint32 Start;
        Uint32 Count;
        Uint64 ContentHash;
    };
    MGP_ASSERT_POD(MGPShaderImages, 16);

    struct MGPBufferRange {
        MGPipeHandle Res;
        Uint64 Offset;
        Uint64 Size;
    };
    MGP_ASSERT_POD(MGPBufferRange, 24);

    enum : Uint32 { kMGPipeShaderBufferClassUniform = 0 };

    enum : Uint32 { kMGPipeShaderBufferClassShaderStorage = 1 };

    enum : Uint32 { kMGPipeShaderBufferClassAtomicCounter = 2 };

    enum : Uint32 { kMGPipeShaderBufferClassCount = 3 };

    enum : Uint32 { kMGPipeShaderBufferWritableMaskWords = 3 };

    struct MGPShaderBuffers {
        Uint32 Class;
        Uint32 Start;
        Uint32 Count;
        Uint32 WritableMask[3];
        Uint32 HostSpanCount;
        Uint32 Pad0;
        Uint64 ContentHash;
    };
    MGP_ASSERT_POD(MGPShaderBuffers, 40);

    struct MGPStreamOutputTargets {
        Uint32 Count;
        Uint32 Pad0;
        Uint64 Generation;
        Uint64 ContentHash;
    };
    MGP_ASSERT_POD(MGPStreamOutputTargets, 24);

    struct MGPProgramSamplerUnit {
        Uint32 Location;
        Int32 Unit;
    };
    MGP_ASSERT_POD(MGPProgramSamplerUnit, 8);

    struct MGPProgramStorageOverride {
        MGHostSpan Name;
        Int32 Binding;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPProgramStorageOverride, 40);

    enum : Uint32 { kMGPipeMaxProgramBlockBindings = 64 };

    enum : Uint32 { kMGPipeMaxProgramSamplerUnits = 256 };

    enum : Uint32 { kMGPipeMaxProgramStorageOverrides = 64 };

    struct MGPProgramBindings {
        MGPipeHandle Cso;
        Uint64 Signature;
        Uint32 BlockBindingCount;
        Uint32 SamplerUnitCount;
        Uint32 StorageOverrideCount;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPProgramBindings, 32);

    struct MGPGlobalConstants {
        MGPipeHandle ShaderCso;
        Uint32 Version;
        Uint32 Pad0;
        MGPBlobRef Blob;
    };
    MGP_ASSERT_POD(MGPGlobalConstants, 40);

    struct MGPAttribValue {
        Uint32 Location;
        Uint8 ValueClass;
        Uint8 Pad0[3];
        Uint32 FloatView[4];
        Uint32 IntView[4];
        Uint32 UintView[4];
    };
    MGP_ASSERT_POD(MGPAttribValue, 56);

    struct MGPVertexAttribDefaults {
        Uint32 Mask;
        Uint32 Count;
    };
    MGP_ASSERT_POD(MGPVertexAttribDefaults, 8);

    struct MGPPixelPackState {
        PixelStoreParameters Pack;
    };
    MGP_ASSERT_POD(MGPPixelPackState, 28);

    struct MGPPatchState {
        Uint32 Vertices;
        Uint32 Pad0;
        Float Outer[4];
        Float Inner[2];
        Uint32 Pad1[2];
    };
    MGP_ASSERT_POD(MGPPatchState, 40);

    struct ResidualValueBlock {
        Uint64 CapabilityBits;
    };

    struct MGPResidualValueState {
        Uint32 Version;
        Uint32 Pad0;
        MGPBlobRef Blob;
    };
    MGP_ASSERT_POD(MGPResidualValueState, 32);

    struct MGPSubRegion {
        Int32 X;
        Int32 Y;
        Int32 Z;
        Uint32 W;
        Uint32 H;
        Uint32 D;
        Uint64 SrcOffset;
        Uint32 SrcRowStride;
        Uint32 SrcSliceStride;
    };
    MGP_ASSERT_POD(MGPSubRegion, 40);

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
        Uint32 LevelWidth;
        Uint32 LevelHeight;
        Uint32 LevelDepth;
        Uint32 LevelPad;
    };
    MGP_ASSERT_POD(MGPSubData, 88);

    struct MGPSubDataComplete {
        MGPipeHandle Res;
        Uint16 Target;
        Uint16 FirstLevel;
        Uint16 LevelCount;
        Uint16 Pad0;
        Uint64 PullSerial;
    };
    MGP_ASSERT_POD(MGPSubDataComplete, 24);

    struct MGPFlushRange {
        MGPipeHandle Res;
        Uint64 Offset;
        Uint64 Size;
        Uint32 AccessFlags;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPFlushRange, 32);

    struct MGPReadback {
        MGPipeHandle Res;
        Uint64 Offset;
        Uint64 Size;
    };
    MGP_ASSERT_POD(MGPReadback, 24);

    struct MGPCopyRegion {
        MGPipeHandle Src;
        MGPipeHandle Dst;
        MGPBox SrcBox;
        Int32 DstX;
        Int32 DstY;
        Int32 DstZ;
        Uint16 SrcTarget;
        Uint16 DstTarget;
        Uint16 SrcLevel;
        Uint16 DstLevel;
        Uint32 SrcGlName;
        Uint32 DstGlName;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPCopyRegion, 72);

    struct MGPBlit {
        MGPipeHandle ReadFbo;
        MGPipeHandle DrawFbo;
        Int32 SrcX0;
        Int32 SrcY0;
        Int32 SrcX1;
        Int32 SrcY1;
        Int32 DstX0;
        Int32 DstY0;
        Int32 DstX1;
        Int32 DstY1;
        Uint32 Mask;
        Uint32 Filter;
    };
    MGP_ASSERT_POD(MGPBlit, 56);

    struct MGPClear {
        MGPipeHandle Fbo;
        Uint32 Kind;
        Int32 DrawBufferIndex;
        Uint32 BufferMask;
        Uint32 ValueClass;
        Uint32 ColorValue[4];
        Float DepthValue;
        Int32 StencilValue;
    };
    MGP_ASSERT_POD(MGPClear, 48);

    enum : Uint32 { kMGPipeClearKindWhole = 0 };

    enum : Uint32 { kMGPipeClearKindColor = 1 };

    enum : Uint32 { kMGPipeClearKindDepth = 2 };

    enum : Uint32 { kMGPipeClearKindStencil = 3 };

    enum : Uint32 { kMGPipeClearKindDepthStencil = 4 };

    enum : Uint32 { kMGPipeClearKindCount = 5 };

    enum : Uint32 { kMGPipeClearValueClassFloat = 0 };

    enum : Uint32 { kMGPipeClearValueClassInt = 1 };

    enum : Uint32 { kMGPipeClearValueClassUint = 2 };

    enum : Uint32 { kMGPipeClearValueClassCount = 3 };

    struct MGPMipPlan {
        MGPipeHandle Res;
        Uint16 Target;
        Uint16 BaseLevel;
        Uint16 LevelCount;
        Uint16 Pad0;
    };
    MGP_ASSERT_POD(MGPMipPlan, 16);

    struct MGPReadbackInfo {
        MGPipeHandle Res;
        MGPBox Box;
        Uint32 Format;
        Uint32 Type;
        Uint16 Target;
        Uint16 Level;
        Uint32 Pad0;
        Uint64 DstOffset;
        Uint64 DstSize;
    };
    MGP_ASSERT_POD(MGPReadbackInfo, 64);

    struct MGPReadbackToBuffer {
        MGPReadbackInfo Src;
        MGPipeHandle Dst;
        Uint64 DstBase;
        Uint64 RowStride;
        Uint64 ImageStride;
        Uint32 SwapGroup;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPReadbackToBuffer, 104);

    enum MGPDrawFlagBit : Uint8 {
        kDrawHasUserIndices = 1,
        kDrawPrimitiveRestart = 2,
        kDrawIndicesAreClient = 4,
        kDrawHasIndexRange = 8,
        kDrawHasXfbCount = 16,
        kDrawIsIndirect = 32,
        kDrawClientArrays = 64,
    };

    struct MGPDrawInfo {
        Uint32 Mode;
        Uint8 IndexSize;
        Uint8 Flags;
        Uint16 Pad0;
        Uint32 InstanceCount;
        Uint32 StartInstance;
        Uint32 RestartIndex;
        Uint32 DrawIdOffset;
        MGPipeHandle IndexResource;
        Uint32 MinIndex;
        Uint32 MaxIndex;
        Uint64 XfbCpuCapturedVertices;
        Uint32 NumDraws;
        Uint32 Pad1;
    };
    MGP_ASSERT_POD(MGPDrawInfo, 56);

    struct MGPDrawRange {
        Uint32 Start;
        Uint32 Count;
        Int32 IndexBias;
    };
    MGP_ASSERT_POD(MGPDrawRange, 12);

    struct MGPDrawIndirect {
        MGPipeHandle Buffer;
        MGPipeHandle ParameterBuffer;
        Uint64 Offset;
        Uint64 ParameterOffset;
        Uint32 Stride;
        Uint32 DrawCount;
    };
    MGP_ASSERT_POD(MGPDrawIndirect, 40);

    struct MGPGridInfo {
        Uint32 GridX;
        Uint32 GridY;
        Uint32 GridZ;
        Uint32 BlockX;
        Uint32 BlockY;
        Uint32 BlockZ;
        MGPipeHandle IndirectBuffer;
        Uint64 IndirectOffset;
        Uint8 IsIndirect;
        Uint8 Pad0[7];
    };
    MGP_ASSERT_POD(MGPGridInfo, 48);

    struct MGPMemoryBarrier {
        Uint32 Bits;
        Uint8 ByRegion;
        Uint8 Pad0[3];
    };
    MGP_ASSERT_POD(MGPMemoryBarrier, 8);

    struct MGPStreamOutputBegin {
        Uint32 PrimitiveMode;
        Uint32 Pad0;
        MGPipeHandle CaptureProgram;
        Uint64 LifetimeId;
        MGPBufferRange Targets[4];
    };
    MGP_ASSERT_POD(MGPStreamOutputBegin, 120);

    struct MGPXfbAccounting {
        Uint64 CapturedVertices;
        Uint64 PrimitivesWritten;
        Uint32 PrimitiveMode;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPXfbAccounting, 24);

    struct MGPStreamOutputControl {
        Uint32 Reserved;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPStreamOutputControl, 8);

    struct MGPFlush {
        Uint32 Flags;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPFlush, 8);

    struct MGPPresent {
        Uint64 FrameSerial;
    };
    MGP_ASSERT_POD(MGPPresent, 8);

    struct MGPSwapInterval {
        Int32 Interval;
        Uint32 Pad0;
    };
    MGP_ASSERT_POD(MGPSwapInterval, 8);

    struct MGPImageBind {
        MGPipeHandle Res;
        Uint32 Unit;
        Uint32 GlName;
        Int32 Level;
        Int32 Layer;
        Uint32 Access;
        Uint32 Format;
        Uint8 Layered;
        Uint8 Pad0[7];
    };
    MGP_ASSERT_POD(MGPImageBind, 40);

    struct MGPPatchParameter {
        Uint32 Pname;
        Int32 Value;
    };
    MGP_ASSERT_POD(MGPPatchParameter, 8);

    struct MGPStreamOutputBind {
        Uint32 GlName;
        Uint32 Pad0;
        Uint64 LifetimeId;
    };
    MGP_ASSERT_POD(MGPStreamOutputBind, 16);

    struct MGPStorageBlockBinding {
        MGPipeHandle ShaderCso;
        Uint32 GlName;
        Uint32 Binding;
        MGPBlobRef Name;
    };
    MGP_ASSERT_POD(MGPStorageBlockBinding, 40);

    struct MGPCopyFromFramebuffer {
        MGPipeHandle Dst;
        Uint32 Target;
        Int32 Level;
        Uint32 InternalFormat;
        Int32 X;
        Int32 Y;
        Int32 Width;
        Int32 Height;
        Int32 XOffset;
        Int32 YOffset;
        Uint8 SubImage;
        Uint8 Pad0[3];
    };
    MGP_ASSERT_POD(MGPCopyFromFramebuffer, 48);

    struct MGPApplierReset {
        Uint64 ContextSerial;
    };
    MGP_ASSERT_POD(MGPApplierReset, 8);

    struct MGPBindContext {
        Uint64 ClientContextToken;
    };
    MGP_ASSERT_POD(MGPBindContext, 8);

    struct MGPContextValues {
        Uint32 ActiveTextureUnit;
        Uint32 MaxTouchedTextureUnit;
        Uint32 TouchedBufferBindingPointCount[15];
        Uint8 IsTransformFeedbackActive;
        Uint8 IsTransformFeedbackPaused;
        Uint8 Pad0[2];
        Uint64 TransformFeedbackGeneration;
        Uint64 BoundTransformFeedbackLifetimeId;
        Uint64 TransformFeedbackCapturedVertices;
    };
    MGP_ASSERT_POD(MGPContextValues, 96);

    struct MGPSurfaceInfo {
        Uint32 Width;
        Uint32 Height;
        Uint32 InternalFormat;
        Uint16 Samples;
        Uint16 Layers;
        Uint8 IsDefault;
        Uint8 Pad0[7];
    };
    MGP_ASSERT_POD(MGPSurfaceInfo, 24);
} // namespace MobileGL
