"""The module's options: declared as plain data (declared.py), checked where the mgr cannot
(validation.py, s3_endpoint.py, window.py), and read once into a typed Config (config.py)."""
