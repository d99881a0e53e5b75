// MGPipeValueTypes.h -- dependency-free value types shared by client and server,
// including RenderStateParameters (seed 000 section 1.2). Field order is load-bearing:
// Espryt's head/blend/tail spans are offsetof(BlendStates) and offsetof(LogicOp).
#pragma once
#include "MGPipeBase.h"

enum : Uint32 {
    kMGMaxDrawBuffers = 8,
    kMGMaxViewports = 16,
    kMGStencilFaceCount = 2,
};

struct FloatVec2 { Float V[2]; };
struct FloatVec4 { Float V[4]; };
struct IntVec4 { Int32 V[4]; };
struct BoolVec4 { Bool V[4]; };

enum class BlendFactor : Uint32 {
    Zero = 0, One = 1, SrcColor = 2, OneMinusSrcColor = 3, DstColor = 4,
    OneMinusDstColor = 5, SrcAlpha = 6, OneMinusSrcAlpha = 7, DstAlpha = 8,
    OneMinusDstAlpha = 9, ConstantColor = 10, OneMinusConstantColor = 11,
    ConstantAlpha = 12, OneMinusConstantAlpha = 13, SrcAlphaSaturate = 14,
};

enum class BlendEquation : Uint32 {
    Add = 0, Subtract = 1, ReverseSubtract = 2, Min = 3, Max = 4,
};

enum class LogicOperation : Uint32 {
    Clear = 0, And = 1, AndReverse = 2, Copy = 3, AndInverted = 4, Noop = 5, Xor = 6,
    Or = 7, Nor = 8, Equiv = 9, Invert = 10, OrReverse = 11, CopyInverted = 12,
    OrInverted = 13, Nand = 14, Set = 15,
};

enum class DepthTestFunc : Uint32 {
    Never = 0, Less = 1, Equal = 2, LessEqual = 3, Greater = 4, NotEqual = 5,
    GreaterEqual = 6, Always = 7,
};

enum class StencilOperation : Uint32 {
    Keep = 0, Zero = 1, Replace = 2, IncrementClamp = 3, DecrementClamp = 4,
    Invert = 5, IncrementWrap = 6, DecrementWrap = 7,
};

enum class HintTarget : Uint32 {
    LineSmooth = 0, PolygonSmooth = 1, TextureCompression = 2, FragmentShaderDerivative = 3,
};

enum class CullFaceMode : Uint32 { Front = 0, Back = 1, FrontAndBack = 2 };
enum class FrontFaceMode : Uint32 { CounterClockwise = 0, Clockwise = 1 };
enum class ProvokingVertexMode : Uint32 { LastVertex = 0, FirstVertex = 1 };

// Every capability glEnable/glDisable can name (seed 000 section 2.1 lists the 22
// SET_CAPABILITY arms; Blend, ScissorTest, ClipDistance0..7 and the three P2 additions).
enum class CapabilityInput : Uint32 {
    ColorLogicOp = 0, DebugOutput = 1, DebugOutputSynchronous = 2, DepthTest = 3,
    CullFace = 4, Dither = 5, LineSmooth = 6, Multisample = 7, PolygonOffsetFill = 8,
    PolygonOffsetLine = 9, PolygonOffsetPoint = 10, PolygonSmooth = 11,
    PrimitiveRestart = 12, PrimitiveRestartFixedIndex = 13, RasterizerDiscard = 14,
    SampleAlphaToCoverage = 15, SampleAlphaToOne = 16, SampleCoverage = 17,
    SampleMask = 18, SampleShading = 19, StencilTest = 20, ProgramPointSize = 21,
    Blend = 22, ScissorTest = 23, ClipDistance0 = 24, ClipDistance1 = 25,
    ClipDistance2 = 26, ClipDistance3 = 27, ClipDistance4 = 28, ClipDistance5 = 29,
    ClipDistance6 = 30, ClipDistance7 = 31, FramebufferSrgb = 32, DepthClamp = 33,
    TextureCubeMapSeamless = 34,
};

struct PerBufferBlendState {
    Bool Enabled;
    Uint8 Pad0[3];
    BlendFactor SrcRGB;
    BlendFactor DstRGB;
    BlendFactor SrcAlpha;
    BlendFactor DstAlpha;
    BlendEquation ModeRGB;
    BlendEquation ModeAlpha;
};

// Field order as seed 000 section 7 item 2: Func Ref ValueMask WriteMask FailOp
// PassDepthFailOp PassDepthPassOp.
struct StencilFaceState {
    DepthTestFunc Func;
    Int32 Ref;
    Uint32 ValueMask;
    Uint32 WriteMask;
    StencilOperation FailOp;
    StencilOperation PassDepthFailOp;
    StencilOperation PassDepthPassOp;
};

struct PixelStoreParameters {
    Int32 Alignment;
    Int32 RowLength;
    Int32 ImageHeight;
    Int32 SkipPixels;
    Int32 SkipRows;
    Int32 SkipImages;
    Bool SwapBytes;
    Bool LsbFirst;
    Uint8 Pad0[2];
};

struct RenderStateParameters {
    FloatVec4 Viewports[16];
    Float LineWidth;
    Float PointSize;
    Uint32 PatchVertices;
    FloatVec4 PatchDefaultOuterLevel;
    FloatVec2 PatchDefaultInnerLevel;
    Float PolygonOffsetFactor;
    Float PolygonOffsetUnits;
    Float PolygonOffsetClamp;
    GLenum ClipOrigin;
    GLenum ClipDepthMode;
    PerBufferBlendState BlendStates[8];
    LogicOperation LogicOp;
    Bool DepthTestEnabled;
    DepthTestFunc DepthFunc;
    Bool DepthMask;
    BoolVec4 ColorMasks[8];
    // P2: three capabilities that had no storage, placed in the 3-byte hole after
    // ColorMasks so that no existing member moves (seed 001 section 5.3).
    Bool FramebufferSrgbEnabled;
    Bool DepthClampEnabled;
    Bool TextureCubeMapSeamlessEnabled;
    FloatVec4 ClearColor;
    Float ClearDepth;
    Uint32 ClearStencil;
    FloatVec4 BlendColor;
    FloatVec2 DepthRanges[16];
    Float SampleCoverageValue;
    Bool SampleCoverageInvert;
    Uint32 SampleMaskValue;
    Float MinSampleShadingValue;
    StencilFaceState StencilStates[2];
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
    IntVec4 ScissorBoxes[16];
    Uint32 ScissorBoxWrittenMask;
    Uint32 ClipDistanceEnabledMask;
};

// The sampler state that crosses the wire byte for byte, including BorderColorForm
// (the blob of CreateSamplerState).
struct SamplerParameters {
    GLenum MinFilter;
    GLenum MagFilter;
    GLenum WrapS;
    GLenum WrapT;
    GLenum WrapR;
    GLenum CompareMode;
    GLenum CompareFunc;
    Float MinLod;
    Float MaxLod;
    Float LodBias;
    Float MaxAnisotropy;
    Uint32 BorderColorForm;  // 0 = float, 1 = int, 2 = uint
    Float BorderColor[4];
    Int32 BorderColorI[4];
    Uint32 BorderColorUI[4];
};
