"""What a structure is: Structure, materials, the JSON format, the catalog, load generators and
coordinate selections. Imports nothing else of tenscontrol."""
