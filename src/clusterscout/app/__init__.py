"""The application layer: one service module per feature, shared by web, CLI and Python API.

Only this layer opens the store (and runs the feeds); the surfaces above it call these
services with a connection and get typed results or plain records back.
"""
