"""Plinth's catalog of built-in locations: the provider regions every org sees
(docs.controlplane.com/reference/location).

The platform publishes no authoritative list of its locations (docs.controlplane.com/reference/location names none),
so this is Plinth's own: the well-known regions of AWS, GCP and Azure, named ``{provider}-{region}`` as the
platform names them (``aws-us-east-1``, ``gcp-us-east1``, ``azure-eastus2``), each with the
provider's region code and where it is: ``{lat, lon, continent, country, state, city}``. The
coordinates are the metro area of the region's data centres, to two decimals; place names are
in English. Nothing is provisioned in any of them: a location here is a name a GVC can be
placed in, and what a workload reports there comes from the runtime (docs/runtime.md).

Every org is seeded with every entry (``server/bootstrap.py``); adding an entry here reaches
existing orgs at the next server start. Removing or renaming one does not remove the stored
location (GVCs may be placed in it), and a changed ``geo`` reaches a stored location's status on
its next write. docs/api.md lists the catalog.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class BuiltinLocation(NamedTuple):
    """One catalog entry: the location's name, its provider and region, and where it is."""

    name: str
    provider: str
    region: str
    city: str
    state: str
    country: str
    continent: str
    lat: float
    lon: float

    def geo(self) -> dict[str, Any]:
        """``status.geo`` as types-ts location.ts shapes it."""
        return {
            "lat": self.lat,
            "lon": self.lon,
            "continent": self.continent,
            "country": self.country,
            "state": self.state,
            "city": self.city,
        }


_NA, _SA, _EU, _AS, _AF, _OC = "North America", "South America", "Europe", "Asia", "Africa", "Oceania"
_US = "United States"

# (region, city, state, country, continent, lat, lon) per provider.
_Region = tuple[str, str, str, str, str, float, float]
_AWS: tuple[_Region, ...] = (
    ("af-south-1", "Cape Town", "Western Cape", "South Africa", _AF, -33.92, 18.42),
    ("ap-east-1", "Hong Kong", "Hong Kong", "Hong Kong", _AS, 22.32, 114.17),
    ("ap-northeast-1", "Tokyo", "Tokyo", "Japan", _AS, 35.68, 139.69),
    ("ap-northeast-2", "Seoul", "Seoul", "South Korea", _AS, 37.57, 126.98),
    ("ap-northeast-3", "Osaka", "Osaka", "Japan", _AS, 34.69, 135.50),
    ("ap-south-1", "Mumbai", "Maharashtra", "India", _AS, 19.08, 72.88),
    ("ap-southeast-1", "Singapore", "Singapore", "Singapore", _AS, 1.35, 103.82),
    ("ap-southeast-2", "Sydney", "New South Wales", "Australia", _OC, -33.87, 151.21),
    ("ca-central-1", "Montreal", "Quebec", "Canada", _NA, 45.50, -73.57),
    ("eu-central-1", "Frankfurt", "Hesse", "Germany", _EU, 50.11, 8.68),
    ("eu-north-1", "Stockholm", "Stockholm", "Sweden", _EU, 59.33, 18.07),
    ("eu-south-1", "Milan", "Lombardy", "Italy", _EU, 45.46, 9.19),
    ("eu-west-1", "Dublin", "Leinster", "Ireland", _EU, 53.35, -6.26),
    ("eu-west-2", "London", "England", "United Kingdom", _EU, 51.51, -0.13),
    ("eu-west-3", "Paris", "Ile-de-France", "France", _EU, 48.86, 2.35),
    ("il-central-1", "Tel Aviv", "Tel Aviv", "Israel", _AS, 32.09, 34.78),
    ("me-central-1", "Dubai", "Dubai", "United Arab Emirates", _AS, 25.20, 55.27),
    ("sa-east-1", "Sao Paulo", "Sao Paulo", "Brazil", _SA, -23.55, -46.63),
    ("us-east-1", "Ashburn", "Virginia", _US, _NA, 39.04, -77.49),
    ("us-east-2", "Columbus", "Ohio", _US, _NA, 39.96, -83.00),
    ("us-west-1", "San Francisco", "California", _US, _NA, 37.77, -122.42),
    ("us-west-2", "Boardman", "Oregon", _US, _NA, 45.84, -119.70),
)
_GCP: tuple[_Region, ...] = (
    ("asia-east1", "Changhua", "Changhua County", "Taiwan", _AS, 24.05, 120.52),
    ("asia-northeast1", "Tokyo", "Tokyo", "Japan", _AS, 35.68, 139.69),
    ("asia-south1", "Mumbai", "Maharashtra", "India", _AS, 19.08, 72.88),
    ("asia-southeast1", "Singapore", "Singapore", "Singapore", _AS, 1.35, 103.70),
    ("australia-southeast1", "Sydney", "New South Wales", "Australia", _OC, -33.87, 151.21),
    ("europe-north1", "Hamina", "Kymenlaakso", "Finland", _EU, 60.57, 27.20),
    ("europe-west1", "St. Ghislain", "Hainaut", "Belgium", _EU, 50.45, 3.82),
    ("europe-west2", "London", "England", "United Kingdom", _EU, 51.51, -0.13),
    ("europe-west3", "Frankfurt", "Hesse", "Germany", _EU, 50.11, 8.68),
    ("europe-west4", "Eemshaven", "Groningen", "Netherlands", _EU, 53.44, 6.83),
    ("me-west1", "Tel Aviv", "Tel Aviv", "Israel", _AS, 32.09, 34.78),
    ("northamerica-northeast1", "Montreal", "Quebec", "Canada", _NA, 45.50, -73.57),
    ("southamerica-east1", "Osasco", "Sao Paulo", "Brazil", _SA, -23.53, -46.79),
    ("us-central1", "Council Bluffs", "Iowa", _US, _NA, 41.26, -95.86),
    ("us-east1", "Moncks Corner", "South Carolina", _US, _NA, 33.20, -80.01),
    ("us-east4", "Ashburn", "Virginia", _US, _NA, 39.04, -77.49),
    ("us-west1", "The Dalles", "Oregon", _US, _NA, 45.59, -121.18),
    ("us-west2", "Los Angeles", "California", _US, _NA, 34.05, -118.24),
)
_AZURE: tuple[_Region, ...] = (
    ("australiaeast", "Sydney", "New South Wales", "Australia", _OC, -33.87, 151.21),
    ("brazilsouth", "Sao Paulo", "Sao Paulo", "Brazil", _SA, -23.55, -46.63),
    ("canadacentral", "Toronto", "Ontario", "Canada", _NA, 43.65, -79.38),
    ("centralindia", "Pune", "Maharashtra", "India", _AS, 18.52, 73.86),
    ("centralus", "Des Moines", "Iowa", _US, _NA, 41.59, -93.62),
    ("eastasia", "Hong Kong", "Hong Kong", "Hong Kong", _AS, 22.32, 114.17),
    ("eastus", "Boydton", "Virginia", _US, _NA, 36.67, -78.39),
    ("eastus2", "Boydton", "Virginia", _US, _NA, 36.67, -78.39),
    ("francecentral", "Paris", "Ile-de-France", "France", _EU, 48.86, 2.35),
    ("germanywestcentral", "Frankfurt", "Hesse", "Germany", _EU, 50.11, 8.68),
    ("japaneast", "Tokyo", "Tokyo", "Japan", _AS, 35.68, 139.69),
    ("northeurope", "Dublin", "Leinster", "Ireland", _EU, 53.35, -6.26),
    ("southcentralus", "San Antonio", "Texas", _US, _NA, 29.42, -98.49),
    ("southeastasia", "Singapore", "Singapore", "Singapore", _AS, 1.35, 103.82),
    ("swedencentral", "Gavle", "Gavleborg", "Sweden", _EU, 60.67, 17.14),
    ("uksouth", "London", "England", "United Kingdom", _EU, 51.51, -0.13),
    ("westeurope", "Amsterdam", "North Holland", "Netherlands", _EU, 52.37, 4.90),
    ("westus2", "Quincy", "Washington", _US, _NA, 47.23, -119.85),
    ("westus3", "Phoenix", "Arizona", _US, _NA, 33.45, -112.07),
)


def _entries(provider: str, regions: tuple[_Region, ...]) -> list[BuiltinLocation]:
    return [
        BuiltinLocation(f"{provider}-{region}", provider, region, city, state, country, continent, lat, lon)
        for region, city, state, country, continent, lat, lon in regions
    ]


#: The catalog, by name (sorted).
BUILTIN_LOCATIONS: dict[str, BuiltinLocation] = {
    entry.name: entry for entry in sorted(_entries("aws", _AWS) + _entries("gcp", _GCP) + _entries("azure", _AZURE))
}

_PROVIDER_TITLES = {"aws": "AWS", "gcp": "GCP", "azure": "Azure"}


def builtin_description(entry: BuiltinLocation) -> str:
    """What a built-in location's ``description`` starts as: ``AWS us-east-1 (Ashburn, Virginia, United States)``."""
    return f"{_PROVIDER_TITLES[entry.provider]} {entry.region} ({entry.city}, {entry.state}, {entry.country})"


def builtin_tags(entry: BuiltinLocation) -> dict[str, str]:
    """The ``cpln/`` tags the server sets on a built-in location (types-ts location.ts)."""
    return {"cpln/city": entry.city, "cpln/country": entry.country, "cpln/continent": entry.continent}
