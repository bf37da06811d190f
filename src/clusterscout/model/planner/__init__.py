"""The planner in parts: request (the job), layouts (search), verdict, ranking, plan (the run).

``plan.plan`` answers "do I need multi-node?" and ranks offers by job cost and time; the other
modules are its steps, each usable alone (the web's scaling chart calls ``layouts`` directly).
Results are typed (``results``); reasons and assumptions are enums every surface translates.
"""
