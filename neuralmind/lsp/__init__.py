"""The language server: a thin pygls adapter over neuralmind.service."""
