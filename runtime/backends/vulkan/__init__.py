"""The Vulkan backend (Magma's shape): see :mod:`.backend` for the table, :mod:`.renderer`
for the Vulkan side, :mod:`.device` for choosing the device and the validation layer."""
