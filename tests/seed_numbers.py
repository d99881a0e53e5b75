"""The numbers the seeds state, pinned once: every test that checks a seed number reads it here.

These are the seeds' facts, not the catalogue's size: appending a call to the catalogue
changes none of them (the documented rows keep their positions, classes and opcodes).
"""

from __future__ import annotations

# Seed 001 §3.2: the documented call rows, and how many of each class.
DOCUMENTED_CALLS = 76
DOCUMENTED_CLASS_COUNTS = {"kScreen": 11, "kCtxQuery": 8, "kCtxCso": 13, "kCtxState": 17,
                           "kCtxObject": 9, "kCtxVerb": 18}
# Seed 002: the four rows it appends after the documented ones, in order.
SEED_002_APPENDED = ["ObjectDeath", "ApplierReset", "SetContextValues", "SetProgramBindings"]
# Seed 000 §2: the render-state chunk table (chunks, bytes) of each half.
PIPELINE_CHUNKS, PIPELINE_BYTES = 7, 396
DYNAMIC_CHUNKS, DYNAMIC_BYTES = 8, 772
# The payload sizes the issue and seeds state.
SEED_SIZES = {
    "MGPipeHandle": 8, "MGPBlobRef": 24, "MGHostSpan": 32, "MGPWireRecHeader": 8,
    "MGPStateChunk": 4, "MGPResourceDesc": 88, "MGPRenderStateDesc": 48,
    "MGPBindRenderState": 12, "MGPDynamicState": 32, "MGPVertexElements": 40,
    "MGPSamplerDesc": 32, "MGPSamplerView": 36, "MGPTextureParams": 40, "MGPProgramDesc": 200,
    "MGPFramebufferState": 304, "MGPSubData": 72, "MGPSubRegion": 40, "MGPDrawInfo": 56,
    "MGPDrawRange": 12, "MGPDrawIndirect": 40, "MGPShaderBuffers": 32, "MGPBufferRange": 24,
    "MGPPixelPackState": 28, "MGPPatchState": 40, "MGPClear": 48, "MGPGlobalConstants": 40,
    "MGPSubDataComplete": 24, "MGPProgramBindings": 32, "MGPProgramSamplerUnit": 8,
    "MGPProgramStorageOverride": 40, "ResidualValueBlock": 8, "PerBufferBlendState": 28,
    "StencilFaceState": 28, "PixelStoreParameters": 28, "RenderStateParameters": 1168,
}
# Seed 000 §1.2: every member's offset (65 members), plus the three P2 enables.
SEED_OFFSETS = {
    "Viewports": 0, "LineWidth": 256, "PointSize": 260, "PatchVertices": 264,
    "PatchDefaultOuterLevel": 268, "PatchDefaultInnerLevel": 284, "PolygonOffsetFactor": 292,
    "PolygonOffsetUnits": 296, "PolygonOffsetClamp": 300, "ClipOrigin": 304, "ClipDepthMode": 308,
    "BlendStates": 312, "LogicOp": 536, "DepthTestEnabled": 540, "DepthFunc": 544,
    "DepthMask": 548, "ColorMasks": 549, "ClearColor": 584, "ClearDepth": 600,
    "ClearStencil": 604, "BlendColor": 608, "DepthRanges": 624, "SampleCoverageValue": 752,
    "SampleCoverageInvert": 756, "SampleMaskValue": 760, "MinSampleShadingValue": 764,
    "StencilStates": 768, "CullFaceEnabled": 824, "CullFaceModeSetting": 828,
    "FrontFaceModeSetting": 832, "ProvokingVertexModeSetting": 836, "LineSmoothHint": 840,
    "PolygonSmoothHint": 844, "TextureCompressionHint": 848, "FragmentShaderDerivativeHint": 852,
    "PointFadeThresholdSize": 856, "PointSpriteCoordOrigin": 860, "ClampReadColor": 864,
    "PolygonModeFront": 868, "PolygonModeBack": 872, "PrimitiveRestartIndex": 876,
    "ColorLogicOpEnabled": 880, "DebugOutputEnabled": 881, "DebugOutputSynchronousEnabled": 882,
    "DitherEnabled": 883, "LineSmoothEnabled": 884, "MultisampleEnabled": 885,
    "PolygonOffsetFillEnabled": 886, "PolygonOffsetLineEnabled": 887,
    "PolygonOffsetPointEnabled": 888, "PolygonSmoothEnabled": 889, "PrimitiveRestartEnabled": 890,
    "PrimitiveRestartFixedIndexEnabled": 891, "RasterizerDiscardEnabled": 892,
    "SampleAlphaToCoverageEnabled": 893, "SampleAlphaToOneEnabled": 894,
    "SampleCoverageEnabled": 895, "SampleMaskEnabled": 896, "SampleShadingEnabled": 897,
    "StencilTestEnabled": 898, "ProgramPointSizeEnabled": 899, "ScissorTestEnabledMask": 900,
    "ScissorBoxes": 904, "ScissorBoxWrittenMask": 1160, "ClipDistanceEnabledMask": 1164,
    "FramebufferSrgbEnabled": 581, "DepthClampEnabled": 582, "TextureCubeMapSeamlessEnabled": 583,
}

# Where MobileGL's own ABI (the snapshot the bundled catalogue/MG_Pipe tree is re-based on:
# MobileGL 4ed1c9ce, PipeCalls.def with 84 rows) moved past the seeds, the snapshot stands.
# Row by row: what moved, the seed's figure, MobileGL's figure, and where the seed states it.
# The DOCUMENTED_* / SEED_002_APPENDED / SEED_SIZES figures above stay the seeds' own and
# describe the older catalogue/ shape; tests of the re-based tree read the ABI column.
ABI_MOVED = {
    "documented calls": (76, 84, "seed 001 §3.2 MGP_CALL_LIST_DOCUMENTED_COUNT"),
    "kScreen calls": (11, 13, "seed 001 §3.2 (+ApplierReset, +BindContext)"),
    "kCtxState calls": (17, 19, "seed 001 §3.2 (+SetContextValues, +SetProgramBindings)"),
    "kCtxObject calls": (9, 11, "seed 001 §3.2 (+ObjectDeath, +GetTextureImageToBuffer)"),
    "kCtxVerb calls": (18, 20, "seed 001 §3.2 (+DeleteStreamOutput, +ReadPixelsToBuffer)"),
    "ApplierReset class": ("kCtxState", "kScreen", "seed 002 (the appended rows)"),
    "ApplierReset opcode": (78, 77, "seed 002: ObjectDeath, ApplierReset, ... appended in that order"),
    "ObjectDeath opcode": (77, 78, "seed 002: ObjectDeath, ApplierReset, ... appended in that order"),
    "MGPSubData bytes": (72, 88, "seed 001 §4.1 payload table (+LevelWidth/Height/Depth/Pad)"),
    "MGPShaderBuffers bytes": (32, 40, "seed 001 §4.1 payload table (WritableMask widened to 12 B)"),
}
#: the snapshot's class counts and appended order, as the re-based tree holds them
ABI_CLASS_COUNTS = {"kScreen": 13, "kCtxQuery": 8, "kCtxCso": 13, "kCtxState": 19,
                    "kCtxObject": 11, "kCtxVerb": 20}
ABI_APPENDED = {"FenceWaitServer": 71, "QueryTimestamp": 69, "QueryCounter": 70,
                "ApplierReset": 77, "ObjectDeath": 78, "SetContextValues": 79,
                "SetProgramBindings": 80, "DeleteStreamOutput": 81, "ReadPixelsToBuffer": 82,
                "GetTextureImageToBuffer": 83, "BindContext": 84}
#: seed 003 cites SetShaderBuffers as wire op 38; MobileGL's list agrees
SEED_003_SET_SHADER_BUFFERS_OP = 38
