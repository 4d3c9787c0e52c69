-- NYC yellow taxi: average fare and distance per trip from one pickup zone
-- (132 = JFK Airport).
select
    count(*) as trips,
    avg(fare_amount) as avg_fare,
    avg(trip_distance) as avg_distance
from taxi
where pickup_location_id = 132;
