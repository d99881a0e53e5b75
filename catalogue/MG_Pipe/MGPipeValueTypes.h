// MGPipeValueTypes.h -- the value blocks the payloads carry whole (render state, sampler
// state, pixel store, vertex layout).
// Declarations of MobileGL's MGPipe ABI (names, members, types, values, pinned
// sizes) written by catalogue/import_abi.py; the words are mgpipe's.
#pragma once

#include "MG_Util/Types.h"
#include "MGPipeVectors.h"

namespace MobileGL {
    inline constexpr SizeT MAX_VIEWPORTS = 16;

    enum : Uint { kMGMaxDrawBuffers = 8 };

    enum class BlendFactor : Int32 {
        Zero = 0,
        One = 1,
        SrcColor = 2,
        OneMinusSrcColor = 3,
        DstColor = 4,
        OneMinusDstColor = 5,
        SrcAlpha = 6,
        OneMinusSrcAlpha = 7,
        DstAlpha = 8,
        OneMinusDstAlpha = 9,
        ConstantColor = 10,
        OneMinusConstantColor = 11,
        ConstantAlpha = 12,
        OneMinusConstantAlpha = 13,
        Src1Color = 14,
        OneMinusSrc1Color = 15,
        Src1Alpha = 16,
        OneMinusSrc1Alpha = 17,
        BlendFactorCount = 18,
        Unknown = -1,
    };

    enum class BlendEquation : Int32 {
        Add = 0,
        Subtract = 1,
        ReverseSubtract = 2,
        Min = 3,
        Max = 4,
        BlendEquationCount = 5,
        Unknown = -1,
    };

    enum class LogicOperation : Int32 {
        Clear = 0,
        And = 1,
        AndReverse = 2,
        Copy = 3,
        AndInverted = 4,
        Noop = 5,
        Xor = 6,
        Or = 7,
        Nor = 8,
        Equiv = 9,
        Invert = 10,
        OrReverse = 11,
        CopyInverted = 12,
        OrInverted = 13,
        Nand = 14,
        Set = 15,
        LogicOperationCount = 16,
        Unknown = -1,
    };

    enum class DepthTestFunc : Int32 {
        Never = 0,
        Less = 1,
        Equal = 2,
        LessEqual = 3,
        Greater = 4,
        NotEqual = 5,
        GreaterEqual = 6,
        Always = 7,
        DepthTestFuncCount = 8,
        Unknown = -1,
    };

    enum class StencilOperation : Int32 {
        Keep = 0,
        Zero = 1,
        Replace = 2,
        IncrementClamp = 3,
        DecrementClamp = 4,
        Invert = 5,
        IncrementWrap = 6,
        DecrementWrap = 7,
        StencilOperationCount = 8,
        Unknown = -1,
    };

    enum class StencilFace : Int32 {
        Front = 0,
        Back = 1,
        StencilFaceCount = 2,
        Unknown = -1,
    };

    enum class PixelStoreParam : Int32 {
        PackAlignment = 0,
        PackRowLength = 1,
        PackImageHeight = 2,
        PackSkipRows = 3,
        PackSkipPixels = 4,
        PackSkipImages = 5,
        PackSwapBytes = 6,
        PackLSBFirst = 7,
        UnpackAlignment = 8,
        UnpackRowLength = 9,
        UnpackImageHeight = 10,
        UnpackSkipRows = 11,
        UnpackSkipPixels = 12,
        UnpackSkipImages = 13,
        UnpackSwapBytes = 14,
        UnpackLSBFirst = 15,
        PixelStoreParamCount = 16,
        Unknown = -1,
    };

    enum class CullFaceMode : Int32 {
        Front = 0,
        Back = 1,
        FrontAndBack = 2,
        CullFaceModeCount = 3,
        Unknown = -1,
    };

    enum class FrontFaceMode : Int32 {
        CounterClockwise = 0,
        Clockwise = 1,
        FrontFaceModeCount = 2,
        Unknown = -1,
    };

    enum class ProvokingVertexMode : Int32 {
        FirstVertex = 0,
        LastVertex = 1,
        ProvokingVertexModeCount = 2,
        Unknown = -1,
    };

    enum class CapabilityInput : Int32 {
        Blend = 0,
        ClipDistance0 = 1,
        ClipDistance1 = 2,
        ClipDistance2 = 3,
        ClipDistance3 = 4,
        ClipDistance4 = 5,
        ClipDistance5 = 6,
        ClipDistance6 = 7,
        ClipDistance7 = 8,
        ColorLogicOp = 9,
        CullFace = 10,
        DebugOutput = 11,
        DebugOutputSynchronous = 12,
        DepthClamp = 13,
        DepthTest = 14,
        Dither = 15,
        FramebufferSrgb = 16,
        LineSmooth = 17,
        Multisample = 18,
        PolygonOffsetFill = 19,
        PolygonOffsetLine = 20,
        PolygonOffsetPoint = 21,
        PolygonSmooth = 22,
        PrimitiveRestart = 23,
        PrimitiveRestartFixedIndex = 24,
        RasterizerDiscard = 25,
        SampleAlphaToCoverage = 26,
        SampleAlphaToOne = 27,
        SampleCoverage = 28,
        SampleShading = 29,
        SampleMask = 30,
        ScissorTest = 31,
        StencilTest = 32,
        TextureCubeMapSeamless = 33,
        ProgramPointSize = 34,
        CapabilityInputCount = 35,
        Unknown = -1,
    };

    struct PixelStoreParameters {
        Bool SwapBytes;
        Bool LSBFirst;
        Int RowLength;
        Int ImageHeight;
        Int SkipPixels;
        Int SkipRows;
        Int SkipImages;
        Int Alignment;
    };

    struct PerBufferBlendState {
        Bool Enabled;
        BlendFactor SrcFactorRGB;
        BlendFactor DstFactorRGB;
        BlendFactor SrcFactorAlpha;
        BlendFactor DstFactorAlpha;
        BlendEquation ColorEquation;
        BlendEquation AlphaEquation;
    };

    struct StencilFaceState {
        DepthTestFunc Func;
        Int Ref;
        Uint32 ValueMask;
        Uint32 WriteMask;
        StencilOperation FailOp;
        StencilOperation PassDepthFailOp;
        StencilOperation PassDepthPassOp;
    };

    struct RenderStateParameters {
        Array<FloatVec4, MAX_VIEWPORTS> Viewports;
        Float LineWidth;
        Float PointSize;
        Uint PatchVertices;
        FloatVec4 PatchDefaultOuterLevel;
        FloatVec2 PatchDefaultInnerLevel;
        Float PolygonOffsetFactor;
        Float PolygonOffsetUnits;
        Float PolygonOffsetClamp;
        GLenum ClipOrigin;
        GLenum ClipDepthMode;
        Array<PerBufferBlendState, kMGMaxDrawBuffers> BlendStates;
        LogicOperation LogicOp;
        Bool DepthTestEnabled;
        DepthTestFunc DepthFunc;
        Bool DepthMask;
        Array<BoolVec4, kMGMaxDrawBuffers> ColorMasks;
        Bool FramebufferSrgbEnabled;
        Bool DepthClampEnabled;
        Bool TextureCubeMapSeamlessEnabled;
        FloatVec4 ClearColor;
        Float ClearDepth;
        Uint32 ClearStencil;
        FloatVec4 BlendColor;
        Array<FloatVec2, MAX_VIEWPORTS> DepthRanges;
        Float SampleCoverageValue;
        Bool SampleCoverageInvert;
        Uint32 SampleMaskValue;
        Float MinSampleShadingValue;
        Array<StencilFaceState, 2> StencilStates;
        Bool CullFaceEnabled;
        CullFaceMode CullFaceModeSetting;
        FrontFaceMode FrontFaceModeSetting;
        ProvokingVertexMode ProvokingVertexModeSetting;
        GLenum LineSmoothHint;
        GLenum PolygonSmoothHint;
        GLenum TextureCompressionHint;
        GLenum FragmentShaderDerivativeHint;
        Float PointFadeThresholdSize;
        GLenum PointSpriteCoordOrigin;
        GLenum ClampReadColor;
        GLenum PolygonModeFront;
        GLenum PolygonModeBack;
        Uint32 PrimitiveRestartIndex;
        Bool ColorLogicOpEnabled;
        Bool DebugOutputEnabled;
        Bool DebugOutputSynchronousEnabled;
        Bool DitherEnabled;
        Bool LineSmoothEnabled;
        Bool MultisampleEnabled;
        Bool PolygonOffsetFillEnabled;
        Bool PolygonOffsetLineEnabled;
        Bool PolygonOffsetPointEnabled;
        Bool PolygonSmoothEnabled;
        Bool PrimitiveRestartEnabled;
        Bool PrimitiveRestartFixedIndexEnabled;
        Bool RasterizerDiscardEnabled;
        Bool SampleAlphaToCoverageEnabled;
        Bool SampleAlphaToOneEnabled;
        Bool SampleCoverageEnabled;
        Bool SampleMaskEnabled;
        Bool SampleShadingEnabled;
        Bool StencilTestEnabled;
        Bool ProgramPointSizeEnabled;
        Uint32 ScissorTestEnabledMask;
        Array<IntVec4, MAX_VIEWPORTS> ScissorBoxes;
        Uint32 ScissorBoxWrittenMask;
        Uint32 ClipDistanceEnabledMask;
    };
    MGP_ASSERT_POD(RenderStateParameters, 1168);

    enum class SamplerFilterMode : Int32 {
        Nearest = 0,
        Linear = 1,
        SamplerFilterCount = 2,
        Unknown = -1,
    };

    enum class SamplerMipmapMode : Int32 {
        None = 0,
        Nearest = 1,
        Linear = 2,
        SamplerMipmapModeCount = 3,
        Unknown = -1,
    };

    enum class SamplerWrapMode : Int32 {
        ClampToEdge = 0,
        MirroredRepeat = 1,
        Repeat = 2,
        ClampToBorder = 3,
        MirrorClampToEdge = 4,
        SamplerWrapModeCount = 5,
        Unknown = -1,
    };

    enum class SamplerCompareMode : Int32 {
        None = 0,
        CompareToTexture = 1,
        SamplerCompareModeCount = 2,
        Unknown = -1,
    };

    enum class SamplerCompareFunc : Int32 {
        Never = 0,
        Less = 1,
        Equal = 2,
        LessEqual = 3,
        Greater = 4,
        NotEqual = 5,
        GreaterEqual = 6,
        Always = 7,
        SamplerCompareFuncCount = 8,
        Unknown = -1,
    };

    enum class BorderColorForm : Uint8 {
        Float = 0,
        Int = 1,
        Uint = 2,
    };

    struct SamplerParameters {
        SamplerWrapMode wrapS;
        SamplerWrapMode wrapT;
        SamplerWrapMode wrapR;
        SamplerFilterMode minFilter;
        SamplerFilterMode magFilter;
        SamplerMipmapMode mipmapMode;
        Float minLod;
        Float maxLod;
        Float lodBias;
        Float maxAnisotropy;
        SamplerCompareFunc compareFunc;
        SamplerCompareMode compareMode;
        FloatVec4 borderColor;
        IntVec4 borderColorI;
        UintVec4 borderColorUI;
        BorderColorForm borderColorForm;
    };

    struct MGPVertexAttribWire {
        Uint64 Offset;
        Int32 Stride;
        Uint32 Type;
        Uint8 Size;
        Uint8 Enabled;
        Uint8 Normalized;
        Uint8 IsInteger;
        Uint8 IsLong;
        Uint8 IsBgra;
        Uint8 BindingIndex;
        Uint8 Pad0;
    };

    struct MGPVertexBindingPointWire {
        Uint64 Offset;
        Int32 Stride;
        Uint32 Divisor;
    };

    enum class MGPipeImageAccess : Uint8 {
        ReadOnly = 0,
        WriteOnly = 1,
        ReadWrite = 2,
        Count = 3,
    };
} // namespace MobileGL
