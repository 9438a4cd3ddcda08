"""vkConvertCooperativeVectorMatrixNV and its command-buffer form, on jitcoop's host conversion
(`jitcoop.convert_coopvec_matrix`: the optimal layouts of the device's profile)."""
from __future__ import annotations

import numpy as np

import jitcoop
from jitcoop.devices.coopvec import coopvec_matrix_size

from . import vk
from .commands import CommandBuffer
from .device import Device
from .memory import memory_at
from .vk import VkError, command


def _params(info) -> dict:
    return dict(rows=info.numRows, cols=info.numColumns, src_type=info.srcComponentType,
                dst_type=info.dstComponentType, src_layout=info.srcLayout, dst_layout=info.dstLayout,
                src_stride=info.srcStride, dst_stride=info.dstStride)


def _size(params, profile) -> int:
    try:
        return coopvec_matrix_size(params["rows"], params["cols"], params["dst_type"], params["dst_layout"],
                                   params["dst_stride"], profile)
    except ValueError as e:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"cooperative vector matrix conversion: {e}") from None


def _convert(src: np.ndarray, dst: np.ndarray, params, profile):
    try:
        jitcoop.convert_coopvec_matrix(src, profile=profile, dst=dst, **params)
    except ValueError as e:
        raise VkError(vk.lib.VK_ERROR_UNKNOWN, f"cooperative vector matrix conversion: {e}") from None


@command
def vkConvertCooperativeVectorMatrixNV(device, info):
    dev = vk.get(device, Device)
    profile = dev.physical.profile.name
    params = _params(info)
    need = _size(params, profile)
    if info.dstData.hostAddress == vk.ffi.NULL:
        info.pDstSize[0] = need
        return vk.lib.VK_SUCCESS
    if info.pDstSize[0] < need:
        return vk.lib.VK_INCOMPLETE
    src = np.frombuffer(vk.ffi.buffer(info.srcData.hostAddress, info.srcSize), np.uint8)
    dst = np.frombuffer(vk.ffi.buffer(info.dstData.hostAddress, need), np.uint8)
    _convert(src, dst, params, profile)
    info.pDstSize[0] = need


def _convert_on_device(state, jobs):
    for src_address, src_size, dst_address, params in jobs:
        profile = state.device.physical.profile.name
        need = _size(params, profile)
        src = memory_at(state.device, src_address, src_size, "vkCmdConvertCooperativeVectorMatrixNV source")
        dst = memory_at(state.device, dst_address, need, "vkCmdConvertCooperativeVectorMatrixNV destination")
        _convert(src, dst, params, profile)


@command
def vkCmdConvertCooperativeVectorMatrixNV(cmd, count, infos):
    cb = vk.get(cmd, CommandBuffer)
    jobs = [(infos[i].srcData.deviceAddress, infos[i].srcSize, infos[i].dstData.deviceAddress, _params(infos[i]))
            for i in range(count)]
    cb.record("vkCmdConvertCooperativeVectorMatrixNV", _convert_on_device, jobs)
